//go:build unix

package localenv

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMakeAncestorsTraversable(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only root switches to an unprivileged account")
	}
	acct, err := serverAccount()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	// t.TempDir's own parent is 0700 too: open it first so that only the
	// directories made below are left to change.
	if _, err := acct.makeAncestorsTraversable(root); err != nil {
		t.Fatal(err)
	}
	closed := filepath.Join(root, "closed")
	open := filepath.Join(closed, "open")
	if err := os.MkdirAll(open, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{root, closed} {
		if err := os.Chmod(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(open, "data")

	changed, err := acct.makeAncestorsTraversable(target)
	if err != nil {
		t.Fatal(err)
	}
	// Only the two 0700 directories change, outermost first.
	if len(changed) != 2 || changed[0] != root || changed[1] != closed {
		t.Fatalf("changed = %v, want [%s %s]", changed, root, closed)
	}
	for _, dir := range []string{root, closed} {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o701 {
			t.Errorf("%s mode = %o, want 701 (only o+x added)", dir, got)
		}
	}
	again, err := acct.makeAncestorsTraversable(target)
	if err != nil || len(again) != 0 {
		t.Errorf("second pass changed %v (%v), want nothing", again, err)
	}
}
