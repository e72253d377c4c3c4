package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir string, files map[string]string) {
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

func TestCaptureLeavesOutWhatTheSandboxRefuses(t *testing.T) {
	t.Parallel()
	src, outside := t.TempDir(), t.TempDir()
	write(t, outside, map[string]string{"secret": "OUTSIDE"})
	write(t, src, map[string]string{"a.go": "a", "dir/b.go": "b", ".env": "DENIED", "big.bin": strings.Repeat("x", 50), "real/c.go": "c"})
	for link, target := range map[string]string{"out.go": filepath.Join(outside, "secret"), "in.go": "a.go", "alias": "real"} {
		if err := os.Symlink(target, filepath.Join(src, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(outside, "secret"), filepath.Join(src, "hard.go")); err != nil {
		t.Fatal(err)
	}
	all := []string{"a.go", "dir/b.go", ".env", "big.bin", "out.go", "in.go", "alias/c.go", "hard.go", "../x", "missing.go"}
	dest, st, err := Capture(context.Background(), src, t.TempDir(), nil, all, CaptureOptions{
		MaxFileBytes: 10, Skip: func(rel string) bool { return rel == ".env" },
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	_ = filepath.WalkDir(dest, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dest, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return nil
	})
	if strings.Join(got, ",") != "a.go,dir/b.go" || st.Files != 2 || st.Skipped != 8 {
		t.Fatalf("copied %v (%+v), want a.go and dir/b.go only", got, st)
	}
}

func TestCaptureBoundsSpareTheChangedFiles(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	write(t, src, map[string]string{"changed.go": "0123456789", "x.go": "0123456789", "y.go": "0123456789"})
	dest, st, err := Capture(context.Background(), src, t.TempDir(), []string{"changed.go"}, []string{"changed.go", "x.go", "y.go"},
		CaptureOptions{MaxFiles: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dest, "changed.go")); err != nil || st.Files != 1 || st.Skipped != 2 {
		t.Fatalf("stats %+v, changed.go: %v", st, err)
	}
	// Edits after the capture do not reach it.
	write(t, src, map[string]string{"changed.go": "edited"})
	if data, _ := os.ReadFile(filepath.Join(dest, "changed.go")); string(data) != "0123456789" {
		t.Fatalf("the copy follows the tree: %q", data)
	}
}
