package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/diff"
)

func TestDenyListDefaults(t *testing.T) {
	t.Parallel()
	d := newDenyList(nil)
	denied := []string{
		".git", ".git/config", "sub/.git/HEAD", "vendor/x/.git", ".env", ".env.local", "app/.env.production",
		".env.d/secrets", "certs/server.pem", "tls.key", "keys/id_rsa", "home/id_rsa.pub", "id_ed25519",
		".npmrc", "web/.npmrc", ".netrc", ".pypirc", ".git-credentials", "credentials", "aws/credentials.json",
		"store.p12", "cert.pfx", ".docker/config.json",
	}
	allowed := []string{".", "env.go", "src/environment.go", "key.go", "keys/README.md", "gitignore", ".gitignore",
		".github/workflows/ci.yml", "internal/auth/session.go", "docker/config.json"}
	for _, p := range denied {
		if !d.denied(p) {
			t.Errorf("%s is not denied", p)
		}
	}
	for _, p := range allowed {
		if d.denied(p) {
			t.Errorf("%s is denied", p)
		}
	}
	// A configured list replaces the defaults, but never frees .git.
	c := newDenyList([]string{"secrets/"})
	for p, want := range map[string]bool{"secrets/a.txt": true, ".env": false, ".git/config": true} {
		if got := c.denied(p); got != want {
			t.Errorf("configured list: denied(%s) = %v, want %v", p, got, want)
		}
	}
}

func TestSandboxDeniesAndHides(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"main.go": "package main // SEEN\n", ".env": "SEEN_SECRET=1\n", ".git/config": "SEEN_SECRET=2\n",
		"deploy/server.pem": "SEEN_SECRET=3\n", "deploy/run.sh": "echo SEEN\n",
	})
	sb, err := newSandbox(root, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.close()
	for _, p := range []string{".env", ".git/config", "deploy/server.pem", "deploy/../.env", ".git"} {
		_, _, err := sb.readFile(p)
		if err == nil || !strings.Contains(err.Error(), msgDenied) {
			t.Errorf("readFile(%q) error = %v, want %q", p, err, msgDenied)
		}
	}
	ctx := context.Background()
	for _, dir := range []string{".", "deploy"} {
		res, err := listDirTool(ctx, sb, listDirArgs{Path: dir})
		if err != nil {
			t.Fatal(err)
		}
		for _, hidden := range []string{".env", ".git", "server.pem"} {
			if strings.Contains(res.text, hidden) {
				t.Errorf("list_dir %s shows %s:\n%s", dir, hidden, res.text)
			}
		}
	}
	res, err := grepTool(ctx, sb, nil, grepArgs{Pattern: "SEEN"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.text, "SECRET") || !strings.Contains(res.text, "2 matching lines in 2 files") {
		t.Errorf("grep shows denied files or misses allowed ones:\n%s", res.text)
	}
}

func TestSandboxRefusesHardLinks(t *testing.T) {
	t.Parallel()
	root, outside := t.TempDir(), t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.txt": "HARDLINKED\n"})
	writeFiles(t, root, map[string]string{"ok.txt": "fine\n"})
	if err := os.Link(filepath.Join(outside, "secret.txt"), filepath.Join(root, "copy.txt")); err != nil {
		t.Skipf("hard links unavailable: %v", err)
	}
	sb, err := newSandbox(root, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.close()
	if data, _, err := sb.readFile("copy.txt"); err == nil || !strings.Contains(err.Error(), msgHardLink) {
		t.Errorf("readFile(copy.txt) = %q, %v; want %q", data, err, msgHardLink)
	}
	res, err := grepTool(context.Background(), sb, nil, grepArgs{Pattern: "HARDLINKED|fine"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.text, "HARDLINKED") || !strings.Contains(res.text, "ok.txt:1: fine") {
		t.Errorf("grep through a hard link:\n%s", res.text)
	}
}

// TestSandboxPathSwappedForSymlink swaps a checked file, then a checked
// directory, for a symlink between the check and the open: the opened file
// is not the one checked, and the read is refused.
func TestSandboxPathSwappedForSymlink(t *testing.T) {
	t.Parallel()
	root, outside := t.TempDir(), t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.txt": "OUTSIDE\n"})
	writeFiles(t, root, map[string]string{"a/ok.txt": "fine\n", "b/ok.txt": "fine\n", "b/.env": "DENIED\n", ".git/ok.txt": "DENIED\n"})
	sb, err := newSandbox(root, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.close()
	swap := func(rel, target string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct{ path, swapAt, target, want string }{
		// os.Root refuses to follow a link out of the directory.
		{"a/ok.txt", "a/ok.txt", filepath.Join(outside, "secret.txt"), "cannot open a/ok.txt"},
		// A link within it is followed by the open, which the check after
		// the open catches.
		{"b/ok.txt", "b/ok.txt", ".env", "changed while it was being opened"},
		{"a/ok.txt", "a", ".git", "changed while it was being opened"},
	}
	for _, tt := range tests {
		writeFiles(t, root, map[string]string{"a/ok.txt": "fine\n", "b/ok.txt": "fine\n"})
		sb.beforeOpen = func(rel string) {
			if rel == tt.swapAt {
				swap(tt.swapAt, tt.target)
			}
		}
		data, _, err := sb.readFile(tt.path)
		sb.beforeOpen = nil
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s swapped at %s for a link to %s: read %q, %v", tt.path, tt.swapAt, tt.target, data, err)
		}
		_ = os.Remove(filepath.Join(root, filepath.FromSlash(tt.swapAt)))
	}
}

// TestSandboxConcurrentSwaps flips a path between a file and a symlink to a
// denied file while it is read: no read may return the denied content.
func TestSandboxConcurrentSwaps(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{".env": "DENIED\n", "f.txt": "fine\n"})
	sb, err := newSandbox(root, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p, tmp := filepath.Join(root, "f.txt"), filepath.Join(root, "f.tmp")
		for i := 0; !stop.Load(); i++ {
			if i%2 == 0 {
				_ = os.Symlink(".env", tmp)
			} else {
				_ = os.WriteFile(tmp, []byte("fine\n"), 0o644)
			}
			_ = os.Rename(tmp, p)
		}
	}()
	for i := 0; i < 2000; i++ {
		data, _, err := sb.readFile("f.txt")
		if err == nil && string(data) != "fine\n" {
			t.Errorf("read %q through a swapped path", data)
			break
		}
	}
	stop.Store(true)
	wg.Wait()
}

// TestDenyListAgreesWithMatchGlob checks the per-segment shortcut against
// diff.MatchGlob applied to the path and each of its directories.
func TestDenyListAgreesWithMatchGlob(t *testing.T) {
	t.Parallel()
	globs := append([]string{"secrets/", "docs/*.key", "a/**/b", "[ab]*.txt", "x?"}, DefaultDeny...)
	paths := []string{"a", "a/b", "a/c/b", "a/c/b/d", "secrets", "secrets/x", "s/secrets/x", "docs/k.key", "z/docs/k.key",
		"b1.txt", "d/a.txt", "xy", "xyz/q", ".env.x", "q/.git", "id_rsa.pub", "w/credentials/y", ".docker/config.json", "x/.docker/config.json"}
	for _, g := range globs {
		d := newDenyList([]string{g})
		for _, p := range paths {
			segs := strings.Split(p, "/")
			want := false
			for i := 1; i <= len(segs) && !want; i++ {
				for _, pat := range []string{".git/", g} {
					if ok, _ := diff.MatchGlob(pat, strings.Join(segs[:i], "/")); ok {
						want = true
					}
				}
			}
			if got := d.denied(p); got != want {
				t.Errorf("glob %q, path %q: denied %v, MatchGlob %v", g, p, got, want)
			}
		}
	}
}
