//go:build unix

package agent

import (
	"os"
	"syscall"
)

// openNoBlock opens path for reading without blocking on FIFOs or devices,
// which the caller then refuses.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
