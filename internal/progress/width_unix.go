//go:build unix

package progress

import (
	"os"

	"golang.org/x/sys/unix"
)

// ttyColumns asks the terminal for its width; 0 when it cannot tell.
func ttyColumns(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
