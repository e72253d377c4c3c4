//go:build unix

package localenv

import (
	"os"
	"path/filepath"
	"testing"
)

// closedAncestor finds the directory the server account cannot enter and
// changes no permission.
func TestClosedAncestorChangesNothing(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only root switches to an unprivileged account")
	}
	acct, err := serverAccount()
	if err != nil {
		t.Fatal(err)
	}
	root := reachableDir(t)
	if dir, err := acct.closedAncestor(filepath.Join(root, "data")); err != nil || dir != "" {
		t.Fatalf("closedAncestor of an open directory = %q, %v; want none", dir, err)
	}
	closed := filepath.Join(root, "closed")
	open := filepath.Join(closed, "open")
	if err := os.MkdirAll(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	dir, err := acct.closedAncestor(filepath.Join(open, "data"))
	if err != nil || dir != closed {
		t.Fatalf("closedAncestor = %q, %v; want %s", dir, err, closed)
	}
	if fi, err := os.Stat(closed); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s mode changed: %v %v", closed, fi.Mode(), err)
	}
}
