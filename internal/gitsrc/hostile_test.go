package gitsrc_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/gitsrc"
	"github.com/reviewfleet/reviewfleet/internal/gitsrc/gitsrctest"
)

// Every function of the package, on a work tree and on a bare repository
// whose configuration, attributes and hooks try to run a program at each
// occasion git offers, runs none of them; and still does its job.
func TestRepositoryConfigurationRunsNothing(t *testing.T) {
	t.Setenv("GIT_SSH_COMMAND", "")
	h := gitsrctest.NewHostile(t)
	h.ProveLive(t)
	ctx := context.Background()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	if !gitsrc.IsRepo(ctx, h.Dir) || !gitsrc.IsBareRepo(ctx, h.Bare) {
		t.Fatal("the hostile repositories are not recognised")
	}
	head, err := gitsrc.ResolveRev(ctx, h.Dir, "main")
	must("resolve", err)
	if head != h.Head {
		t.Errorf("main = %s, want %s", head, h.Head)
	}
	files, err := gitsrc.ListFiles(ctx, h.Dir)
	must("ls-files", err)
	if !slices.Contains(files, "util.py") {
		t.Errorf("tracked files %v", files)
	}
	d, err := gitsrc.Diff(ctx, h.Dir, h.Base, h.Head)
	must("diff", err)
	if !strings.Contains(string(d), "-    return a + b") {
		t.Errorf("diff without the change:\n%s", d)
	}
	msg, err := gitsrc.Log(ctx, h.Dir, h.Base, h.Head)
	must("log", err)
	if !strings.Contains(msg, "subtract instead") {
		t.Errorf("log %q", msg)
	}
	blobs, err := gitsrc.ReadFiles(ctx, h.Dir, h.Head, []string{"app.py", "version.txt"}, 0)
	must("read at head", err)
	if string(blobs["version.txt"].Data) != "$Format:%G? %H$\n" {
		t.Errorf("version.txt read as %q, want the stored bytes", blobs["version.txt"].Data)
	}
	_, err = gitsrc.ReadFiles(ctx, h.Dir, "", []string{"util.py"}, 0)
	must("read the work tree", err)
	_, err = gitsrc.ReadFile(ctx, h.Dir, h.Head, "app.py")
	must("read one file", err)
	dest := filepath.Join(t.TempDir(), "tree")
	must("export", gitsrc.Export(ctx, h.Dir, h.Head, dest))
	if got, _ := os.ReadFile(filepath.Join(dest, "version.txt")); string(got) != "$Format:%G? %H$\n" {
		t.Errorf("exported version.txt is %q: export-subst was applied", got)
	}
	if !gitsrc.HasCommit(ctx, h.Bare, h.Base) {
		t.Error("the bare copy lacks the base commit")
	}

	// The bare copy is a remote, cloned and fetched from over file://.
	remote, err := gitsrc.ParseRemote("file://" + h.Bare)
	must("parse", err)
	mirror := filepath.Join(t.TempDir(), "mirror.git")
	must("mirror", gitsrc.Mirror(ctx, remote, mirror))
	must("fetch refs", gitsrc.FetchRefs(ctx, mirror, remote))
	_, err = gitsrc.FetchRev(ctx, mirror, remote, h.Head)
	must("fetch rev", err)
	must("export from the mirror", gitsrc.Export(ctx, mirror, h.Head, filepath.Join(t.TempDir(), "tree")))
	clone := filepath.Join(t.TempDir(), "clone")
	must("clone", gitsrc.Clone(ctx, "file://"+h.Bare, clone))
	_, err = gitsrc.Diff(ctx, clone, h.Base, h.Head)
	must("diff in the clone", err)

	if ran := h.Ran(); len(ran) > 0 {
		t.Errorf("the repository's configuration ran: %v", ran)
	}
}

// A repository owned by someone else is read when the fleet names it, and
// only that one: safe.directory is never a wildcard.
func TestSafeDirectoryNamesTheRepository(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs to change a repository's owner")
	}
	h := gitsrctest.NewHostile(t)
	sub := filepath.Join(h.Dir, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := filepath.Walk(h.Dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 54321, 54321)
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := gitsrc.ResolveRev(ctx, h.Dir, "main"); err != nil {
		t.Errorf("a repository owned by another user, named by the fleet: %v", err)
	}
	if _, err := gitsrc.ListFiles(ctx, sub); err == nil || !strings.Contains(err.Error(), "dubious ownership") {
		t.Errorf("git run from a subdirectory of it trusted the repository: %v", err)
	}
}
