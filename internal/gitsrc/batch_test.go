package gitsrc

import (
	"context"
	"fmt"
	"testing"
)

func TestReadFilesFew(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ctx := context.Background()
	names := []string{"src/calc.go", "sp ace/ä file.txt", "link.go", "old.txt", "no such file", "../escape", "logo.bin"}
	got, err := ReadFiles(ctx, repo.dir, "main", names, 20)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"sp ace/ä file.txt": "two\r\n", "link.go": "src/calc.go"}
	for name, content := range want {
		if b, ok := got[name]; !ok || string(b.Data) != content {
			t.Errorf("%q = %q (found %v), want %q", name, b.Data, ok, content)
		}
	}
	if b := got["src/calc.go"]; b.Data != nil || b.Size != 54 {
		t.Errorf("over the limit: got %d bytes of data, size %d; want no data, size 54", len(b.Data), b.Size)
	}
	if b := got["logo.bin"]; string(b.Data) != "\x00\x01\x02binary2" {
		t.Errorf("logo.bin = %q, want its bytes", b.Data)
	}
	for _, absent := range []string{"old.txt", "no such file", "../escape"} {
		if _, ok := got[absent]; ok {
			t.Errorf("%q is absent at head but was returned", absent)
		}
	}
}

func TestReadFilesMany(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	const n = 300
	var names []string
	for i := range n {
		name := fmt.Sprintf("dir %d/fïle ✓ %03d.txt", i%7, i)
		writeFile(t, dir, name, fmt.Sprintf("content %d\n", i), 0o644)
		names = append(names, name)
	}
	writeFile(t, dir, "gone.txt", "x\n", 0o644)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "many")
	git(t, dir, "rm", "-q", "gone.txt")
	git(t, dir, "commit", "-q", "-m", "rm")
	names = append(names, "gone.txt", "missing/too.txt", "dir 1")
	ctx := context.Background()
	for _, rev := range []string{"main", ""} {
		got, err := ReadFiles(ctx, dir, rev, names, 0)
		if err != nil {
			t.Fatalf("rev %q: %v", rev, err)
		}
		if len(got) != n {
			t.Errorf("rev %q: read %d files, want %d", rev, len(got), n)
		}
		for i, name := range names[:n] {
			if want := fmt.Sprintf("content %d\n", i); string(got[name].Data) != want {
				t.Fatalf("rev %q: %q = %q, want %q", rev, name, got[name].Data, want)
			}
		}
	}
}

func TestReadFilesUnknownRevision(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	if _, err := ReadFiles(context.Background(), repo.dir, "nope", []string{"a"}, 0); err == nil {
		t.Fatal("want an error for an unknown revision")
	}
}
