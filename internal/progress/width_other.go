//go:build !unix

package progress

import "os"

// ttyColumns cannot ask the terminal here; $COLUMNS or 80 is used.
func ttyColumns(*os.File) int { return 0 }
