//go:build unix

package agent

import (
	"io/fs"
	"os"
	"syscall"
)

// openNoBlock opens name in dir for reading without blocking on FIFOs or
// devices, which the caller then refuses.
func openNoBlock(dir *os.Root, name string) (*os.File, error) {
	return dir.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// linkCount returns the number of hard links of the file fi describes.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
