package gitsrc

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

func TestExport(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ctx := context.Background()
	parent := t.TempDir()
	dest := filepath.Join(parent, "snap", "head")
	if err := Export(ctx, repo.dir, "main", dest); err != nil {
		t.Fatalf("Export: %v", err)
	}
	files := map[string]string{
		"src/calc.go":       "package src\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
		"src/new.go":        "package src\n\nconst Limit = 10\n",
		"docs/manual.md":    strings.Repeat("line of the guide\n", 20),
		"sp ace/ä file.txt": "two\r\n",
		"logo.bin":          "\x00\x01\x02binary2",
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dest, filepath.FromSlash(name)))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v, want %q", name, got, err, want)
		}
	}
	for _, gone := range []string{"old.txt", "docs/guide.md", ".git"} {
		if _, err := os.Lstat(filepath.Join(dest, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s should not be in the snapshot (err %v)", gone, err)
		}
	}
	info, err := os.Lstat(filepath.Join(dest, "link.go"))
	if err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link.go is not a symbolic link: %v, %v", info, err)
	}
	if target, err := os.Readlink(filepath.Join(dest, "link.go")); err != nil || target != "src/calc.go" {
		t.Errorf("link.go points at %q, %v", target, err)
	}
	if info, err := os.Stat(filepath.Join(dest, "run.sh")); err != nil || info.Mode()&0o111 == 0 {
		t.Errorf("run.sh lost its executable bit: %v, %v", info, err)
	}
	if info, err := os.Stat(filepath.Join(dest, "src/calc.go")); err != nil || info.Mode()&0o111 != 0 {
		t.Errorf("src/calc.go became executable: %v, %v", info, err)
	}
	entries, err := os.ReadDir(filepath.Join(parent, "snap"))
	if err != nil || len(entries) != 1 {
		t.Errorf("temporary directories left behind: %v, %v", entries, err)
	}

	// The base revision is a different tree.
	baseDest := filepath.Join(parent, "base")
	if err := Export(ctx, repo.dir, repo.base, baseDest); err != nil {
		t.Fatalf("Export base: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(baseDest, "old.txt")); err != nil || string(got) != "remove me\n" {
		t.Errorf("base old.txt = %q, %v", got, err)
	}
}

func TestExportErrors(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ctx := context.Background()
	existing := t.TempDir()
	if err := Export(ctx, repo.dir, "main", existing); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("Export into an existing directory: %v", err)
	}
	parent := t.TempDir()
	err := Export(ctx, repo.dir, "no-such-rev", filepath.Join(parent, "x"))
	if !errors.Is(err, ErrUnknownRevision) || !strings.Contains(err.Error(), "no-such-rev") {
		t.Errorf("Export of an unknown revision: %v", err)
	}
	// Commit ids skip the separate resolution; ids of no commit (a tree,
	// an absent object) are still unknown revisions.
	for _, id := range []string{git(t, repo.dir, "rev-parse", "HEAD^{tree}"), strings.Repeat("e", 40)} {
		err := Export(ctx, repo.dir, id, filepath.Join(parent, "z"))
		if !errors.Is(err, ErrUnknownRevision) || !strings.Contains(err.Error(), id) {
			t.Errorf("Export of %s: %v", id, err)
		}
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if err := Export(canceled, repo.dir, "main", filepath.Join(parent, "y")); !errors.Is(err, context.Canceled) {
		t.Errorf("Export with a canceled context: %v", err)
	}
	if entries, err := os.ReadDir(parent); err != nil || len(entries) != 0 {
		t.Errorf("failed exports left %v behind (%v)", entries, err)
	}
}

// tarOf builds an archive from headers; regular files get their name as
// content.
func tarOf(t *testing.T, hdrs ...tar.Header) *tar.Reader {
	t.Helper()
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, h := range hdrs {
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(h.Name))
		}
		if err := w.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := w.Write([]byte(h.Name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return tar.NewReader(&buf)
}

func TestExtractTarRefusesEscapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		hdrs    []tar.Header
		wantErr error
	}{
		{
			name:    "parent directory in the name",
			hdrs:    []tar.Header{{Name: "../evil.txt", Typeflag: tar.TypeReg, Mode: 0o644}},
			wantErr: ErrUnsafePath,
		},
		{
			name:    "absolute name",
			hdrs:    []tar.Header{{Name: "/tmp/evil.txt", Typeflag: tar.TypeReg, Mode: 0o644}},
			wantErr: ErrUnsafePath,
		},
		{
			name: "write through a symbolic link pointing outside",
			hdrs: []tar.Header{
				{Name: "out", Typeflag: tar.TypeSymlink, Linkname: "../.."},
				{Name: "out/evil.txt", Typeflag: tar.TypeReg, Mode: 0o644},
			},
		},
		{
			name: "replace a symbolic link with a file",
			hdrs: []tar.Header{
				{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/hostname"},
				{Name: "link", Typeflag: tar.TypeReg, Mode: 0o644},
			},
		},
		{
			name: "hard link",
			hdrs: []tar.Header{{Name: "hard", Typeflag: tar.TypeLink, Linkname: "x"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			outer := t.TempDir()
			dir := filepath.Join(outer, "a", "b")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			err := extractTar(context.Background(), tarOf(t, tc.hdrs...), dir)
			if err == nil {
				t.Fatalf("extractTar accepted the archive")
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error = %v, want %v", err, tc.wantErr)
			}
			for _, p := range []string{filepath.Join(outer, "evil.txt"), filepath.Join(outer, "a", "evil.txt")} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s was written outside the destination", p)
				}
			}
		})
	}
}

func TestExtractTarKeepsSymlinksAndDirs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tr := tarOf(t,
		tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": "0123"}},
		tar.Header{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o755},
		tar.Header{Name: "d/x.sh", Typeflag: tar.TypeReg, Mode: 0o755},
		tar.Header{Name: "deep/er/y.txt", Typeflag: tar.TypeReg, Mode: 0o644},
		tar.Header{Name: "abs-link", Typeflag: tar.TypeSymlink, Linkname: "/etc/hostname"},
	)
	if err := extractTar(context.Background(), tr, dir); err != nil {
		t.Fatalf("extractTar: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "deep/er/y.txt")); err != nil || string(got) != "deep/er/y.txt" {
		t.Errorf("deep/er/y.txt = %q, %v", got, err)
	}
	if info, err := os.Stat(filepath.Join(dir, "d/x.sh")); err != nil || info.Mode()&0o100 == 0 {
		t.Errorf("d/x.sh mode: %v, %v", info, err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "abs-link")); err != nil || target != "/etc/hostname" {
		t.Errorf("abs-link = %q, %v", target, err)
	}
}

// extractTar writes the entries of tr under dir, as exportInto writes the
// entries of a tree. It goes through an os.Root
// so that no entry, even one reached through a symbolic link written
// earlier, can be created outside dir; entry names that are absolute or
// climb out with ".." are refused before that.
func extractTar(ctx context.Context, tr *tar.Reader, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer root.Close()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read archive: %w", err)
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue // git's commit id comment
		}
		name := path.Clean(hdr.Name)
		if name == "." {
			continue
		}
		if !filepath.IsLocal(filepath.FromSlash(name)) {
			return fmt.Errorf("archive entry %q: %w", hdr.Name, ErrUnsafePath)
		}
		local := filepath.FromSlash(name)
		if err := writeEntry(root, hdr, tr, local); err != nil {
			return fmt.Errorf("archive entry %q: %w", hdr.Name, err)
		}
	}
}
