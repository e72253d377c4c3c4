//go:build !unix

package snapshot

import "io/fs"

// linkCount returns 1: the link count is not available here.
func linkCount(fs.FileInfo) uint64 { return 1 }
