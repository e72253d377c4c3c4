package gitsrc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestReadFile(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ctx := context.Background()
	// An uncommitted change shows in the work tree only.
	writeFile(t, repo.dir, "src/calc.go", "package src // edited\n", 0o644)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(repo.dir, "escape.txt")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		rev      string
		path     string
		want     string
		wantErr  error
		wantFail bool
	}{
		{name: "base revision", rev: repo.base, path: "src/calc.go", want: "package src\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"},
		{name: "head by branch", rev: "main", path: "src/calc.go", want: "package src\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"},
		{name: "unusual name", rev: "main", path: "sp ace/ä file.txt", want: "two\r\n"},
		{name: "symbolic link at a revision reads as its target", rev: "main", path: "link.go", want: "src/calc.go"},
		{name: "cleaned path", rev: "main", path: "./src//new.go", want: "package src\n\nconst Limit = 10\n"},
		{name: "work tree", path: "src/calc.go", want: "package src // edited\n"},
		{name: "added at head, absent at base", rev: repo.base, path: "src/new.go", wantErr: ErrNotExist},
		{name: "absent with a space in the name", rev: "main", path: "no such file", wantErr: ErrNotExist},
		{name: "deleted at head", rev: "main", path: "old.txt", wantErr: ErrNotExist},
		{name: "absent in the work tree", path: "nope.txt", wantErr: ErrNotExist},
		{name: "directory at a revision", rev: "main", path: "src", wantFail: true},
		{name: "unknown revision", rev: "nope", path: "src/calc.go", wantErr: ErrUnknownRevision},
		{name: "parent directory", path: "../x", wantErr: ErrUnsafePath},
		{name: "parent directory at a revision", rev: "main", path: "src/../../x", wantErr: ErrUnsafePath},
		{name: "absolute path", path: "/etc/passwd", wantErr: ErrUnsafePath},
		{name: "symbolic link leaving the work tree", path: "escape.txt", wantFail: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ReadFile(ctx, repo.dir, tc.rev, tc.path)
			switch {
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("ReadFile error = %v, want %v", err, tc.wantErr)
				}
			case tc.wantFail:
				if err == nil {
					t.Fatalf("ReadFile = %q, want an error", got)
				}
			default:
				if err != nil || string(got) != tc.want {
					t.Fatalf("ReadFile = %q, %v, want %q", got, err, tc.want)
				}
			}
		})
	}
}
