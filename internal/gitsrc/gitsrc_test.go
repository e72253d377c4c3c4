package gitsrc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// testRepo is a repository with two commits, base and head.
type testRepo struct {
	dir        string
	base, head string
}

// git runs git in dir with a fixed identity and no user or system
// configuration, failing the test on error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_AUTHOR_DATE=2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2024-01-01T00:00:00Z",
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// writeFile writes a file under dir, creating directories.
func writeFile(t *testing.T, dir, name, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// newRepo builds a repository whose head commit modifies, adds, deletes,
// renames and chmods files relative to base, and changes a binary file, a
// symbolic link and files with unusual names.
func newRepo(t *testing.T) testRepo {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	writeFile(t, dir, "src/calc.go", "package src\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n", 0o644)
	writeFile(t, dir, "old.txt", "remove me\n", 0o644)
	writeFile(t, dir, "docs/guide.md", strings.Repeat("line of the guide\n", 20), 0o644)
	writeFile(t, dir, "run.sh", "#!/bin/sh\necho hi\n", 0o644)
	writeFile(t, dir, "logo.bin", "\x00\x01\x02binary", 0o644)
	writeFile(t, dir, "sp ace/ä file.txt", "one\n", 0o644)
	if err := os.Symlink("src/calc.go", filepath.Join(dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	base := git(t, dir, "rev-parse", "HEAD")

	writeFile(t, dir, "src/calc.go", "package src\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n", 0o644)
	writeFile(t, dir, "src/new.go", "package src\n\nconst Limit = 10\n", 0o644)
	git(t, dir, "rm", "-q", "old.txt")
	git(t, dir, "mv", "docs/guide.md", "docs/manual.md")
	writeFile(t, dir, "run.sh", "#!/bin/sh\necho hi\n", 0o755)
	writeFile(t, dir, "logo.bin", "\x00\x01\x02binary2", 0o644)
	writeFile(t, dir, "sp ace/ä file.txt", "two\r\n", 0o644)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "head")
	head := git(t, dir, "rev-parse", "HEAD")
	git(t, dir, "tag", "v1", base)
	return testRepo{dir: dir, base: base, head: head}
}

func TestResolveRev(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ctx := context.Background()
	tests := []struct {
		rev     string
		want    string
		wantErr error
	}{
		{rev: "HEAD", want: repo.head},
		{rev: "main", want: repo.head},
		{rev: "main~1", want: repo.base},
		{rev: "v1", want: repo.base},
		{rev: repo.base[:10], want: repo.base},
		{rev: "no-such-branch", wantErr: ErrUnknownRevision},
		{rev: "HEAD~5", wantErr: ErrUnknownRevision},
		{rev: "", wantErr: ErrUnknownRevision},
		{rev: "--output=/tmp/x", wantErr: ErrUnsafePath},
		{rev: "main\nHEAD", wantErr: ErrUnsafePath},
		{rev: strings.TrimSpace(git(t, repo.dir, "rev-parse", "HEAD^{tree}")), wantErr: ErrUnknownRevision},
		{rev: "HEAD^{/no commit says this}", wantErr: ErrUnknownRevision},
	}
	for _, tc := range tests {
		t.Run(tc.rev, func(t *testing.T) {
			t.Parallel()
			got, err := ResolveRev(ctx, repo.dir, tc.rev)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("ResolveRev(%q) error = %v, want %v", tc.rev, err, tc.wantErr)
				}
				if tc.rev != "" && !strings.Contains(err.Error(), strconv.Quote(tc.rev)) {
					t.Errorf("error %q does not name the revision", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ResolveRev(%q) = %q, %v, want %q", tc.rev, got, err, tc.want)
			}
		})
	}
}

// TestResolveRevs checks several revisions resolved by one git, each to
// its own commit in order, and an unknown one among them named.
func TestResolveRevs(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ctx := context.Background()
	got, err := ResolveRevs(ctx, repo.dir, "main~1", "HEAD", repo.head, "v1")
	if err != nil || !slices.Equal(got, []string{repo.base, repo.head, repo.head, repo.base}) {
		t.Fatalf("ResolveRevs = %v, %v; want base, head, head, base", got, err)
	}
	_, err = ResolveRevs(ctx, repo.dir, "HEAD", "no such branch", "main")
	if !errors.Is(err, ErrUnknownRevision) || !strings.Contains(err.Error(), `"no such branch"`) {
		t.Fatalf("error = %v, want ErrUnknownRevision naming the second revision", err)
	}
}

func TestResolveRevNotARepository(t *testing.T) {
	t.Parallel()
	_, err := ResolveRev(context.Background(), t.TempDir(), "HEAD")
	var ge *Error
	if !errors.As(err, &ge) || errors.Is(err, ErrUnknownRevision) {
		t.Fatalf("error = %v, want a git error that is not ErrUnknownRevision", err)
	}
	if !strings.Contains(ge.Stderr, "not a git repository") {
		t.Errorf("stderr %q does not carry git's message", ge.Stderr)
	}
}

func TestResolveRevCanceled(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ResolveRev(ctx, repo.dir, "HEAD"); !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

func TestIsRepo(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ctx := context.Background()
	bare := filepath.Join(t.TempDir(), "bare.git")
	git(t, repo.dir, "clone", "-q", "--bare", repo.dir, bare)
	tests := []struct {
		name string
		dir  string
		want bool
	}{
		{"work tree top level", repo.dir, true},
		{"bare repository", bare, true},
		{"subdirectory of a work tree", filepath.Join(repo.dir, "src"), false},
		{"git directory", filepath.Join(repo.dir, ".git"), false},
		{"plain directory", t.TempDir(), false},
		{"missing directory", filepath.Join(t.TempDir(), "nope"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := IsRepo(ctx, tc.dir); got != tc.want {
				t.Errorf("IsRepo(%s) = %v, want %v", tc.dir, got, tc.want)
			}
		})
	}
}

func TestClone(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ctx := context.Background()
	dest := filepath.Join(t.TempDir(), "clone")
	if err := Clone(ctx, "file://"+repo.dir, dest); err != nil {
		t.Fatalf("Clone: %v", err)
	}
	if !IsRepo(ctx, dest) {
		t.Fatalf("clone at %s is not a repository", dest)
	}
	if got, err := ResolveRev(ctx, dest, "origin/main~1"); err != nil || got != repo.base {
		t.Fatalf("ResolveRev in the clone = %q, %v, want %q", got, err, repo.base)
	}
	data, err := Diff(ctx, dest, repo.base, repo.head)
	if err != nil {
		t.Fatalf("Diff in the clone: %v", err)
	}
	want, err := Diff(ctx, repo.dir, repo.base, repo.head)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("diff in the clone differs from the original's")
	}
}

func TestCloneErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name    string
		url     string
		wantErr error
		wantMsg string
	}{
		{"option-like url", "--upload-pack=true", ErrUnsafePath, ""},
		{"empty url", "", ErrUnsafePath, ""},
		{"ext transport", "ext::sh -c touch% /tmp/x", nil, "not a URL"},
		{"ext transport as a URL", "ext://sh", nil, `transport "ext" is not allowed`},
		{"missing repository", "file://" + filepath.Join(t.TempDir(), "none"), nil, "does not appear to be a git repository"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := Clone(ctx, tc.url, filepath.Join(t.TempDir(), "dest"))
			if err == nil {
				t.Fatalf("Clone(%q) succeeded", tc.url)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("Clone(%q) error = %v, want %v", tc.url, err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("Clone(%q) error %q does not contain %q", tc.url, err, tc.wantMsg)
			}
		})
	}
}
