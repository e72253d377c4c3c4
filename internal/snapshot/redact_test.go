package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedactTree checks that secrets in a snapshot are replaced on disk,
// the changed files numbered first, files with NUL bytes redacted too,
// files and directories named by a secret removed, and .git left alone.
func TestRedactTree(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const a, b = "ghp_3Tz85pkNGcVx2RHLKXSf3wh34LxCnzm8KVby", "ghp_ZMvaBhnoCru0ftOsgHYdbyXJZBFwTXpKVeBP"
	write("a/first.go", "var t = \""+a+"\"\n")
	write("z/changed.go", "var t = \""+b+"\"\nvar u = \""+a+"\"\n")
	write("bin.dat", "\x00"+a)
	write(".git/config", "url = https://x:"+a+"@github.com/o/r\n")
	write("late-nul.txt", strings.Repeat("text\n", 2000)+"token = \""+b+"\"\n\x00tail\n")
	write("keys/"+b+".txt", "hello\n")
	write("dir-"+a+"/x.go", "package x\n")
	if err := RedactTree(context.Background(), dir, []string{"z/changed.go"}); err != nil {
		t.Fatal(err)
	}
	read := func(rel string) string {
		data, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if got := read("z/changed.go"); got != "var t = \"[REDACTED:github-token:1]\"\nvar u = \"[REDACTED:github-token:2]\"\n" {
		t.Errorf("changed file:\n%s", got)
	}
	if got := read("a/first.go"); got != "var t = \"[REDACTED:github-token:2]\"\n" {
		t.Errorf("other file:\n%s", got)
	}
	if strings.Contains(read("bin.dat"), a) || !strings.HasPrefix(read("bin.dat"), "\x00") {
		t.Errorf("binary file kept its secret: %q", read("bin.dat"))
	}
	if got := read("late-nul.txt"); strings.Contains(got, b) || !strings.HasSuffix(got, "\x00tail\n") {
		t.Errorf("file with a late NUL kept its secret or lost its other bytes")
	}
	if !strings.Contains(read(".git/config"), a) {
		t.Errorf(".git was rewritten")
	}
	for _, gone := range []string{"keys/" + b + ".txt", "dir-" + a} {
		if _, err := os.Lstat(filepath.Join(dir, gone)); !os.IsNotExist(err) {
			t.Errorf("%s is still in the snapshot (%v)", gone, err)
		}
	}
}
