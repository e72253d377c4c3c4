package submit

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/stages/intent"
)

func gitRepo(t *testing.T, base, head map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	write := func(files map[string]string) {
		for p, c := range files {
			full := filepath.Join(dir, p)
			if c == "" {
				_ = os.Remove(full)
				continue
			}
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	run("init", "-q")
	write(base)
	run("add", "-A")
	run("commit", "-q", "-m", "base")
	write(head)
	run("add", "-A")
	run("commit", "-q", "-m", "head")
	return dir
}

func files(nr review.NewReview) map[string]review.File {
	m := map[string]review.File{}
	for _, f := range nr.Files {
		m[f.Path] = f
	}
	return m
}

func TestPrepareGitChange(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t,
		map[string]string{"a.go": "package a\n\nfunc A() {}\n", "go.sum": "x v1\n", "img.png": "\x89PNG\x00\x01"},
		map[string]string{"a.go": "package a\n\nfunc A() { panic(1) }\n", "go.sum": "x v2\n", "img.png": "\x89PNG\x00\x02", "new.go": "package a\n"})
	nr, err := Prepare(context.Background(), config.Default(), Request{Origin: FromOperator, Repo: repo, Base: "HEAD~1", Head: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	fs := files(nr)
	if fs["go.sum"].SkipReason != "lock_file" || fs["img.png"].SkipReason != "binary" || fs["a.go"].SkipReason != "" {
		t.Fatalf("skip reasons: %+v", fs)
	}
	if fs["a.go"].Content == nil || !strings.Contains(*fs["a.go"].Content, "panic(1)") || len(fs["a.go"].ChangedLines) == 0 {
		t.Fatalf("a.go: %+v", fs["a.go"])
	}
	if nr.Purpose != "head" {
		t.Errorf("purpose %q, want the commit message", nr.Purpose)
	}
	if nr.IntentMode != intent.ModePerFile || len(nr.Items) != 2 || nr.BaseSHA == "" || len(nr.HeadSHA) != 40 {
		t.Fatalf("review: mode %s, %d items, %s..%s", nr.IntentMode, len(nr.Items), nr.BaseSHA, nr.HeadSHA)
	}
}

func TestPrepareChunksLargeChanges(t *testing.T) {
	t.Parallel()
	base, head := map[string]string{}, map[string]string{}
	for i := 0; i < 16; i++ {
		p := filepath.Join("pkg", string(rune('a'+i))+".go")
		base[p] = "package pkg\n"
		head[p] = "package pkg\n\nvar X = 1\n"
	}
	repo := gitRepo(t, base, head)
	cfg := config.Default()
	nr, err := Prepare(context.Background(), cfg, Request{Origin: FromOperator, Repo: repo, Base: "HEAD~1", Head: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	if nr.IntentMode != intent.ModeChunked {
		t.Fatalf("16 files ≥ threshold 15: mode %s", nr.IntentMode)
	}
	seen := 0
	for _, it := range nr.Items {
		var p intent.ItemPayload
		if err := json.Unmarshal(it.Payload, &p); err != nil || p.Mode != intent.ModeChunked || len(p.Files) > cfg.Intent.ChunkMaxFiles {
			t.Fatalf("item %s: %s", it.Key, it.Payload)
		}
		seen += len(p.Files)
	}
	if seen != 16 || len(nr.Items) != 3 {
		t.Fatalf("%d files in %d chunks", seen, len(nr.Items))
	}
	cfg.Intent.ChunkFilesThreshold = 100
	nr, _ = Prepare(context.Background(), cfg, Request{Origin: FromOperator, Repo: repo, Base: "HEAD~1", Head: "HEAD"})
	if nr.IntentMode != intent.ModePerFile || len(nr.Items) != 16 {
		t.Fatalf("with a higher threshold: %s, %d items", nr.IntentMode, len(nr.Items))
	}
}

func TestPrepareDiffFileRebuildsAddedFiles(t *testing.T) {
	t.Parallel()
	d := filepath.Join(t.TempDir(), "c.diff")
	patch := "diff --git a/n.py b/n.py\nnew file mode 100644\n--- /dev/null\n+++ b/n.py\n@@ -0,0 +1,2 @@\n+def f(x=[]):\n+    return x\n"
	if err := os.WriteFile(d, []byte(patch), 0o644); err != nil {
		t.Fatal(err)
	}
	nr, err := Prepare(context.Background(), config.Default(), Request{Origin: FromOperator, DiffFile: d})
	if err != nil {
		t.Fatal(err)
	}
	f := files(nr)["n.py"]
	if f.Content == nil || *f.Content != "def f(x=[]):\n    return x\n" || nr.Source != "diff" {
		t.Fatalf("added file not rebuilt: %+v", f)
	}
}

func TestPrepareErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bad := filepath.Join(t.TempDir(), "bad.diff")
	_ = os.WriteFile(bad, []byte("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-a\n+b\n"), 0o644)
	empty := filepath.Join(t.TempDir(), "empty.diff")
	_ = os.WriteFile(empty, nil, 0o644)
	notDiff := filepath.Join(t.TempDir(), "notes.txt")
	_ = os.WriteFile(notDiff, []byte("just some notes\n"), 0o644)
	modify := "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\n"
	twice := filepath.Join(t.TempDir(), "series.diff")
	_ = os.WriteFile(twice, []byte(modify+modify), 0o644)
	noRepo := filepath.Join(t.TempDir(), "modify.diff")
	_ = os.WriteFile(noRepo, []byte(modify), 0o644)
	d, err := demo.WriteRepo(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]Request{
		"nothing to review":      {},
		"parse diff":             {DiffFile: bad},
		"empty":                  {DiffFile: empty},
		"not a git repository":   {Repo: t.TempDir(), Base: "a", Head: "b"},
		"--base":                 {Repo: d.Dir, Base: "no-such-rev", Head: "HEAD"},
		"needs both":             {Repo: d.Dir, Head: "HEAD"},
		"read diff":              {DiffFile: filepath.Join(t.TempDir(), "missing.diff")},
		"no file headers":        {DiffFile: notDiff},
		"more than once":         {DiffFile: twice},
		"give --repo":            {DiffFile: noRepo},
		"is --repo the checkout": {DiffFile: noRepo, Repo: t.TempDir()},
	}
	for want, req := range cases {
		req.Origin = FromOperator
		_, err := Prepare(ctx, config.Default(), req)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: error %v, want it to mention %q", req, err, want)
		}
	}
}

func TestPreamble(t *testing.T) {
	t.Parallel()
	patch := "From 1234 Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nDate: Mon, 1 Jan 2024\nSubject: [PATCH 1/2] Retry uploads\n\nUploads fail on flaky networks.\n---\n a.go | 2 +-\n\ndiff --git a/a.go b/a.go\n"
	if got := preamble([]byte(patch)); got != "Retry uploads\n\nUploads fail on flaky networks." {
		t.Fatalf("preamble %q", got)
	}
	if got := preamble([]byte("diff --git a/a b/a\n")); got != "" {
		t.Fatalf("a plain diff has no purpose, got %q", got)
	}
}

func TestPrepareSkipsTextThatIsNotUTF8(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t,
		map[string]string{"latin.py": "x = 1\n", "ok.go": "package a\n"},
		map[string]string{"latin.py": "x = 'caf\xe9'\n", "ok.go": "package a\n\nvar X = 1\n"})
	nr, err := Prepare(context.Background(), config.Default(), Request{Origin: FromOperator, Repo: repo, Base: "HEAD~1", Head: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	fs := files(nr)
	if fs["latin.py"].SkipReason != ReasonNotUTF8 || fs["latin.py"].Diff != "" || fs["ok.go"].SkipReason != "" {
		t.Fatalf("files: %+v", fs)
	}
	if len(nr.Items) != 1 {
		t.Fatalf("%d items, want only ok.go reviewed", len(nr.Items))
	}
}

func TestPrepareTypeChangeIsOneFile(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"target.go": "package a\n"}, map[string]string{"target.go": "package a\n\n// T.\n"})
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if err := os.Symlink("target.go", filepath.Join(repo, "link.go")); err != nil {
		t.Fatal(err)
	}
	run("add", "-A")
	run("commit", "-qm", "link")
	_ = os.Remove(filepath.Join(repo, "link.go"))
	if err := os.WriteFile(filepath.Join(repo, "link.go"), []byte("package a\n\nvar L = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "-A")
	run("commit", "-qm", "file")
	nr, err := Prepare(context.Background(), config.Default(), Request{Origin: FromOperator, Repo: repo, Base: "HEAD~1", Head: "HEAD"})
	if err != nil {
		t.Fatalf("a symlink that became a file: %v", err)
	}
	f := files(nr)["link.go"]
	if len(nr.Files) != 1 || f.Change != "added" || f.Content == nil || !strings.Contains(*f.Content, "var L") {
		t.Fatalf("files: %+v", nr.Files)
	}
}
