package gitsrc

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// TestReadFilesUnknownRevision checks that a revision naming no commit is
// an error, whether it is resolved first (a name, or many files) or checked
// by the git reading the files (a full commit id, few files).
func TestReadFilesUnknownRevision(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ctx := context.Background()
	tree := strings.TrimSpace(git(t, repo.dir, "rev-parse", "HEAD^{tree}"))
	absent := strings.Repeat("0", 40)
	many := make([]string, lsTreeThreshold)
	for i := range many {
		many[i] = fmt.Sprint("f", i)
	}
	for _, c := range []struct {
		rev   string
		names []string
	}{
		{"nope", []string{"a"}}, {absent, []string{"src/calc.go"}}, {absent, nil},
		{tree, []string{"src/calc.go"}}, {absent, many},
	} {
		if got, err := ReadFiles(ctx, repo.dir, c.rev, c.names, 0); !errors.Is(err, ErrUnknownRevision) {
			t.Errorf("ReadFiles(%s, %d names) = %d files, %v; want ErrUnknownRevision", c.rev, len(c.names), len(got), err)
		}
	}
	got, err := ReadFiles(ctx, repo.dir, repo.head, []string{"src/calc.go"}, 0)
	if err != nil || len(got) != 1 {
		t.Fatalf("ReadFiles at the head commit = %v, %v", got, err)
	}
}
