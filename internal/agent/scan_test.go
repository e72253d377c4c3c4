package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func scanRepo(t *testing.T) *sandbox {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"src/app.go":             "package app\n// TODO: fix\nfunc Run() {}\n",
		"src/app_test.go":        "package app\n// TODO: test\n",
		"src/gen/gen.go":         "// TODO: generated\n",
		"web/index.ts":           "// TODO: web\n",
		"data.bin":               "TODO\x00binary",
		"node_modules/m/i.js":    "// TODO: dependency\n",
		".git/config":            "TODO git\n",
		"build/out.js":           "// TODO: build\n",
		"pkg/tmp/scratch.txt":    "TODO scratch\n",
		"pkg/notes/tmpfile.txt":  "TODO not noise\n",
		"src/big.go":             "// TODO\n" + strings.Repeat("x", 1100),
		"src/many.txt":           strings.Repeat("hit\n", maxScanHits+5),
		"docs/guide.md":          "no match here\n",
		"src/nested/deep/a.go":   "// TODO: deep\n",
		"src/nested/deep/b.java": "// TODO: java\n",
	}
	writeFiles(t, root, files)
	mustSymlink(t, filepath.Join(root, "src/app.go"), filepath.Join(root, "link.go"))
	sb, err := newSandbox(root, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

func TestGrepTool(t *testing.T) {
	t.Parallel()
	sb := scanRepo(t)
	ignore := func(p string) bool { return strings.HasPrefix(p, "src/gen/") }
	tests := []struct {
		pattern, glob string
		want, reject  []string
		fact          bool
	}{
		{
			pattern: "TODO", glob: "",
			want:   []string{"src/app.go:2: // TODO: fix", "web/index.ts:1: // TODO: web", "pkg/notes/tmpfile.txt:1: TODO not noise", "src/nested/deep/a.go:1"},
			reject: []string{"node_modules", ".git", "build/", "pkg/tmp/", "data.bin", "src/gen/", "src/big.go", "link.go"},
			fact:   true,
		},
		{pattern: "TODO", glob: "*.go", want: []string{"src/app.go:2", "src/app_test.go:2", "src/nested/deep/a.go:1"}, reject: []string{"index.ts", "b.java"}, fact: true},
		{pattern: "TODO", glob: "src/nested", want: []string{"src/nested/deep/a.go:1", "src/nested/deep/b.java:1"}, reject: []string{"src/app.go"}, fact: true},
		{pattern: `func \w+\(`, glob: "src/**", want: []string{"1 matching lines in 1 files", "src/app.go:3: func Run() {}"}, fact: true},
		{pattern: "hit", glob: "src/many.txt", want: []string{fmt.Sprintf("%d matching lines in 1 files (stopped at %d", maxScanHits, maxScanHits)}, fact: true},
		{pattern: "nothing-matches-this", want: []string{"no matching lines found"}},
	}
	for _, tt := range tests {
		res, err := grepTool(context.Background(), sb, ignore, grepArgs{Pattern: tt.pattern, PathGlob: tt.glob})
		if err != nil {
			t.Errorf("grep %q %q: %v", tt.pattern, tt.glob, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(res.text, w) {
				t.Errorf("grep %q %q lacks %q:\n%s", tt.pattern, tt.glob, w, res.text)
			}
		}
		for _, r := range tt.reject {
			if strings.Contains(res.text, r) {
				t.Errorf("grep %q %q contains %q:\n%s", tt.pattern, tt.glob, r, res.text)
			}
		}
		if res.fact != tt.fact {
			t.Errorf("grep %q %q fact = %v, want %v", tt.pattern, tt.glob, res.fact, tt.fact)
		}
	}
}

func TestGrepToolRejects(t *testing.T) {
	t.Parallel()
	sb := scanRepo(t)
	tests := []struct {
		args grepArgs
		err  string
	}{
		{grepArgs{}, "needs a pattern"},
		{grepArgs{Pattern: "(a"}, "not a valid RE2"},
		{grepArgs{Pattern: `(a)\1`}, "not a valid RE2"},
		{grepArgs{Pattern: strings.Repeat("a", maxPatternLen+1)}, "longer than 512"},
		{grepArgs{Pattern: "a", PathGlob: "../x"}, "must not contain .."},
	}
	for _, tt := range tests {
		_, err := grepTool(context.Background(), sb, nil, tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("grep %+v error = %v, want %q", tt.args, err, tt.err)
		}
	}
}

func TestGrepToolStopsOnContext(t *testing.T) {
	t.Parallel()
	sb := scanRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := grepTool(ctx, sb, nil, grepArgs{Pattern: "TODO"}); err != context.Canceled {
		t.Fatalf("grep with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestReadFileTool(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	writeFiles(t, root, map[string]string{
		"f.txt": strings.Join(lines, "\r\n") + "\r\n", "empty.txt": "", "bin.dat": "a\x00b",
		"long.txt": strings.Repeat("é", maxLineBytes) + "\n",
	})
	sb, err := newSandbox(root, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args      readFileArgs
		want, err string
	}{
		{readFileArgs{Path: "f.txt", StartLine: 2, EndLine: 3}, "f.txt lines 2-3 of 30\n2: line 2\n3: line 3\n", ""},
		{readFileArgs{Path: "f.txt", StartLine: 29}, "f.txt lines 29-30 of 30\n29: line 29\n30: line 30\n", ""},
		{readFileArgs{Path: "f.txt", StartLine: 5, EndLine: 99}, "f.txt lines 5-14 of 30\n", ""},
		{readFileArgs{Path: "f.txt", StartLine: 5, EndLine: 99}, "[capped at 10 lines: continue with start_line=15]", ""},
		{readFileArgs{Path: "empty.txt"}, "empty.txt is empty", ""},
		{readFileArgs{Path: "long.txt"}, "…[line clipped]", ""},
		{readFileArgs{Path: "f.txt", StartLine: 31}, "", "start_line 31 is past the end of f.txt (30 lines)"},
		{readFileArgs{Path: "f.txt", StartLine: 9, EndLine: 3}, "", "end_line 3 is before start_line 9"},
		{readFileArgs{Path: "f.txt", StartLine: -1}, "", "must be positive"},
		{readFileArgs{Path: "bin.dat"}, "", "bin.dat is a binary file"},
		{readFileArgs{}, "", "read_file needs a path"},
	}
	for _, tt := range tests {
		res, err := readFileTool(context.Background(), sb, tt.args, 10)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("read %+v error = %v, want %q", tt.args, err, tt.err)
			}
			continue
		}
		if err != nil || !strings.Contains(res.text, tt.want) {
			t.Errorf("read %+v = %q, %v; want it to contain %q", tt.args, res.text, err, tt.want)
		}
		if strings.Contains(res.text, "\r") {
			t.Errorf("read %+v kept carriage returns", tt.args)
		}
	}
}

func TestListDirTool(t *testing.T) {
	t.Parallel()
	sb := scanRepo(t)
	res, err := listDirTool(context.Background(), sb, listDirArgs{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{".: 8 entries\n", "\ndata.bin\n", "\nlink.go@\n", "\nsrc/\n"} {
		if !strings.Contains(res.text, w) {
			t.Errorf("list_dir . lacks %q:\n%s", w, res.text)
		}
	}
	if strings.Contains(res.text, ".git") {
		t.Errorf("list_dir . shows the denied .git:\n%s", res.text)
	}
	if _, err := listDirTool(context.Background(), sb, listDirArgs{Path: "src/app.go"}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("list_dir on a file: %v", err)
	}
}
