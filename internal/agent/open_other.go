//go:build !unix

package agent

import (
	"io/fs"
	"os"
)

// openNoBlock opens name in dir for reading.
func openNoBlock(dir *os.Root, name string) (*os.File, error) {
	return dir.Open(name)
}

// linkCount returns 1: the link count is not available here.
func linkCount(fs.FileInfo) uint64 { return 1 }
