//go:build !unix

package agent

import "os"

// openNoBlock opens path for reading.
func openNoBlock(path string) (*os.File, error) {
	return os.Open(path)
}
