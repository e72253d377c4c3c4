package snapshot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/redact"
)

// countRedactions counts the files that reach the redactor until the test
// ends, starting with nothing remembered clean.
func countRedactions(t testing.TB) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	was := redactContent
	redactContent = func(r *redact.Redactor, data []byte) []byte { n.Add(1); return was(r, data) }
	cleanFiles.reset()
	t.Cleanup(func() { redactContent = was; cleanFiles.reset() })
	return &n
}

func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, s := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A later tree redacts only content not found clean before: a file with a
// secret every time, a clean file changed to hold one (same path, new
// content), and new files; content seen clean is left as it is.
func TestRedactTreeSkipsContentFoundClean(t *testing.T) {
	n := countRedactions(t)
	const a, b = "ghp_3Tz85pkNGcVx2RHLKXSf3wh34LxCnzm8KVby", "ghp_ZMvaBhnoCru0ftOsgHYdbyXJZBFwTXpKVeBP"
	first := map[string]string{
		"main.go":     "package main\n\nfunc main() {}\n",
		"util/x.go":   "package util\n\nconst X = 1\n",
		"util/y.go":   "package util\n\nconst Y = 2\n",
		"secret.go":   "package main\n\nvar t = \"" + a + "\"\n",
		"README.md":   "# demo\n",
		"later/z.txt": "plain text\n",
	}
	dir1 := t.TempDir()
	writeTree(t, dir1, first)
	if err := RedactTree(context.Background(), dir1, []string{"secret.go"}); err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != int64(len(first)) {
		t.Fatalf("first tree: %d files redacted, want all %d", got, len(first))
	}

	n.Store(0)
	second := map[string]string{}
	for k, v := range first {
		second[k] = v
	}
	second["util/x.go"] = "package util\n\nconst X = \"" + b + "\"\n" // was clean, now holds a secret
	second["new.go"] = "package main\n"
	dir2 := t.TempDir()
	writeTree(t, dir2, second)
	if err := RedactTree(context.Background(), dir2, []string{"util/x.go"}); err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 3 {
		t.Fatalf("second tree: %d files redacted, want 3 (secret.go, the changed util/x.go, new.go)", got)
	}
	read := func(rel string) string {
		data, err := os.ReadFile(filepath.Join(dir2, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if got := read("util/x.go"); got != "package util\n\nconst X = \"[REDACTED:github-token:1]\"\n" {
		t.Errorf("the file changed to hold a secret:\n%s", got)
	}
	if got := read("secret.go"); strings.Contains(got, a) || !strings.Contains(got, "[REDACTED:github-token:2]") {
		t.Errorf("the file with a secret, in a later tree:\n%s", got)
	}
	for _, rel := range []string{"main.go", "util/y.go", "README.md", "later/z.txt"} {
		if got := read(rel); got != second[rel] {
			t.Errorf("%s changed: %q", rel, got)
		}
	}
}

// The set is bounded: full, it starts again rather than growing.
func TestCleanFilesIsBounded(t *testing.T) {
	var c cleanSet
	for i := range maxCleanFiles + 10 {
		var k [32]byte
		copy(k[:], fmt.Sprintf("%031d", i))
		c.add(k)
	}
	if len(c.m) > maxCleanFiles || len(c.m) == 0 {
		t.Fatalf("%d entries, want 1 to %d", len(c.m), maxCleanFiles)
	}
	var last [32]byte
	copy(last[:], fmt.Sprintf("%031d", maxCleanFiles+9))
	if !c.has(last) {
		t.Fatal("the last hash added is not remembered")
	}
}

// BenchmarkRedactTreeAgain redacts a tree of 2,000 files of 100 distinct
// lines (200,000 lines, more than the redactor's line caches hold, as in a
// large repository): "first" with nothing remembered, "again" after the
// same content was redacted once in the process.
func BenchmarkRedactTreeAgain(b *testing.B) {
	files := map[string]string{}
	size := 0
	for f := range 2000 {
		var sb strings.Builder
		fmt.Fprintf(&sb, "package p%d\n", f)
		for l := range 100 {
			fmt.Fprintf(&sb, "var value%d_%d = compute(%d, \"label %d of file %d\") // note %d\n", f, l, l*f, l, f, f*l)
		}
		files[fmt.Sprintf("pkg%02d/f%d.go", f%40, f)] = sb.String()
		size += sb.Len()
	}
	src := b.TempDir()
	writeTree(b, src, files)
	for _, again := range []bool{false, true} {
		name := map[bool]string{false: "first", true: "again"}[again]
		b.Run(name, func(b *testing.B) {
			cleanFiles.reset()
			b.Cleanup(cleanFiles.reset)
			if again {
				if err := RedactTree(context.Background(), copyTree(b, src), nil); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(size))
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				if !again {
					cleanFiles.reset()
				}
				dir := copyTree(b, src)
				b.StartTimer()
				if err := RedactTree(context.Background(), dir, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// copyTree copies the files under src to a new directory.
func copyTree(b *testing.B, src string) string {
	b.Helper()
	dst := b.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		b.Fatal(err)
	}
	return dst
}
