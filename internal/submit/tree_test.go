package submit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/diff"
)

// git runs git in dir and returns its output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return string(out)
}

// diffOf writes the diff HEAD~1..HEAD of repo to a file and returns it.
func diffOf(t *testing.T, repo string) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "change.diff")
	if err := os.WriteFile(d, []byte(git(t, repo, "diff", "HEAD~1", "HEAD")), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

var (
	baseTree = map[string]string{
		"a.go":      "package a\n\nfunc A() {}\n",
		"gone.go":   "package a\n\nvar Gone = 1\n",
		"helper.go": "package a\n\nfunc helper() int { return 1 }\n",
		".env":      "API_TOKEN=tracked-secret\n",
	}
	headTree = map[string]string{
		"a.go":    "package a\n\nfunc A() { panic(helper()) }\n",
		"gone.go": "",
		"new.go":  "package a\n\nvar New = 2\n",
	}
)

func TestPrepareDiffRefusesTreeWithoutThePatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name  string
		setup func(t *testing.T, repo string)
		want  string
	}{
		{"tree at the base revision", func(t *testing.T, repo string) { git(t, repo, "checkout", "-q", "HEAD~1") },
			"a.go:3 does not hold the line the diff adds there"},
		{"deleted file still there", func(t *testing.T, repo string) {
			writeTree(t, repo, map[string]string{"gone.go": baseTree["gone.go"]})
		}, "gone.go: the diff removes this file but it is still there"},
		{"changed line differs", func(t *testing.T, repo string) {
			writeTree(t, repo, map[string]string{"a.go": "package a\n\nfunc A() { panic(0) }\n"})
		}, "a.go:3 does not hold the line the diff adds there"},
		{"added file missing", func(t *testing.T, repo string) { _ = os.Remove(filepath.Join(repo, "new.go")) },
			"new.go: the diff adds or changes this file but it is missing"},
		{"line moved", func(t *testing.T, repo string) {
			writeTree(t, repo, map[string]string{"new.go": "package a\n\n\nvar New = 2\n"})
		}, "new.go:3 does not hold the line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := gitRepo(t, baseTree, headTree)
			d := diffOf(t, repo)
			tt.setup(t, repo)
			_, err := Prepare(ctx, config.Default(), Request{Origin: FromOperator, DiffFile: d, Repo: repo, CacheDir: t.TempDir()})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "does not hold the patched code") {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestPrepareDiffReviewsASnapshotOfTheTree(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, baseTree, headTree)
	d := diffOf(t, repo)
	writeTree(t, repo, map[string]string{"untracked.txt": "not part of the repository\n"})
	cache := t.TempDir()
	nr, err := Prepare(context.Background(), config.Default(), Request{Origin: FromOperator, DiffFile: d, Repo: repo, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if nr.Snapshot == repo || !strings.HasPrefix(nr.Snapshot, filepath.Join(cache, "snapshots")) {
		t.Fatalf("snapshot %q: want a copy under the cache, not the work tree", nr.Snapshot)
	}
	// Edits after submission do not reach what is reviewed.
	writeTree(t, repo, map[string]string{"a.go": "package a\n\n// edited later\n", "helper.go": "package a\n"})
	read := func(p string) string {
		data, err := os.ReadFile(filepath.Join(nr.Snapshot, p))
		if err != nil {
			return "<absent>"
		}
		return string(data)
	}
	for p, want := range map[string]string{
		"a.go": headTree["a.go"], "new.go": headTree["new.go"], "helper.go": baseTree["helper.go"],
		"gone.go": "<absent>", ".env": "<absent>", "untracked.txt": "<absent>", ".git/config": "<absent>",
	} {
		if got := read(p); got != want {
			t.Errorf("snapshot %s = %q, want %q", p, got, want)
		}
	}
}

func TestPrepareSetsAsideSymlinksAndSubmodules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A git range: a symlink and a submodule entry added in the head.
	repo := gitRepo(t, map[string]string{"a.go": "package a\n"}, map[string]string{"b.go": "package a\n\nvar B = 1\n"})
	if err := os.Symlink("/etc/passwd", filepath.Join(repo, "passwd.go")); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("1", 40)+",lib")
	git(t, repo, "add", "passwd.go")
	git(t, repo, "commit", "-q", "-m", "link and submodule")
	nr, err := Prepare(ctx, config.Default(), Request{Origin: FromOperator, Repo: repo, Base: "HEAD~2", Head: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	fs := files(nr)
	if fs["passwd.go"].SkipReason != diff.ReasonSymlink || fs["lib"].SkipReason != diff.ReasonSubmodule || fs["b.go"].SkipReason != "" {
		t.Fatalf("skip reasons: passwd.go %q, lib %q, b.go %q", fs["passwd.go"].SkipReason, fs["lib"].SkipReason, fs["b.go"].SkipReason)
	}
	if len(nr.Items) != 1 {
		t.Errorf("%d items, want only b.go reviewed", len(nr.Items))
	}

	// A plain diff against a work tree where the changed path is a symlink.
	tree := t.TempDir()
	writeTree(t, tree, map[string]string{"real.go": "package a\n\nvar R = 1\n", "ok.go": "package a\n\nvar O = 1\n"})
	if err := os.Symlink("real.go", filepath.Join(tree, "link.go")); err != nil {
		t.Fatal(err)
	}
	plain := "--- a/link.go\n+++ b/link.go\n@@ -1,3 +1,3 @@\n package a\n \n-var R = 0\n+var R = 1\n" +
		"--- a/ok.go\n+++ b/ok.go\n@@ -1,3 +1,3 @@\n package a\n \n-var O = 0\n+var O = 1\n"
	d := filepath.Join(t.TempDir(), "plain.diff")
	if err := os.WriteFile(d, []byte(plain), 0o644); err != nil {
		t.Fatal(err)
	}
	nr, err = Prepare(ctx, config.Default(), Request{Origin: FromOperator, DiffFile: d, Repo: tree, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	fs = files(nr)
	if fs["link.go"].SkipReason != diff.ReasonSymlink || fs["link.go"].Content != nil || fs["ok.go"].SkipReason != "" {
		t.Fatalf("link.go %+v, ok.go %+v", fs["link.go"], fs["ok.go"])
	}
	if _, err := os.Lstat(filepath.Join(nr.Snapshot, "link.go")); err == nil {
		t.Errorf("the snapshot holds the symlink")
	}
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The copy of the work tree numbers its secrets as the stored review does:
// a file the review does not store (vendored) is not numbered first, so
// the expert reads the same marker for a value as the diff shows.
func TestPrepareDiffSnapshotNumbersSecretsAsTheReview(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"README": "x\n"}, map[string]string{
		"vendor/lib/x.go": "package lib\n\nconst id = \"AKIAQWERTYUIOPASDF22\"\n",
		"z.go":            "package z\n\nconst id = \"AKIAQWERTYUIOPASDF11\"\n",
	})
	nr, err := Prepare(context.Background(), config.Default(), Request{Origin: FromOperator, DiffFile: diffOf(t, repo), Repo: repo, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var stored string
	for _, f := range nr.Files {
		if f.Path == "z.go" && f.Content != nil {
			stored = *f.Content
		}
	}
	copied, err := os.ReadFile(filepath.Join(nr.Snapshot, "z.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stored, "[REDACTED:aws-access-key-id:1]") || string(copied) != stored {
		t.Fatalf("z.go stored as %q, copied as %q: want the same, numbered 1", stored, copied)
	}
}
