package localenv

import (
	"os"
	"testing"
)

// reachableDir is a fresh directory every account may enter (mode 0755,
// in the system's temporary directory), unlike t.TempDir's 0700 ones.
func reachableDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "reviewfleet-localenv-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
