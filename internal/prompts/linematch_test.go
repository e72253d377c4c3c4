package prompts

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

// The literal test before each pattern changes no detector result: lines
// of the project's sample diffs, of this package's tests (which quote code
// for every signal) and of the rest of its Go code, read in chunks as each
// language the table knows, as they are and upper-cased, give the same
// hits with the test as with every pattern run over every line.
func TestLinePrefilterKeepsEveryHit(t *testing.T) {
	t.Parallel()
	lines := corpusLines(t, 700)
	exts := []string{".go", ".py", ".js", ".java", ".rb", ".rs", ".c", ".yaml"}
	const chunk = 12
	checked, hits, ascii := 0, 0, 0
	for from := 0; from < len(lines); from += chunk {
		var marked strings.Builder
		for _, l := range lines[from:min(from+chunk, len(lines))] {
			marked.WriteString("+" + l + "\n")
		}
		for _, text := range []string{marked.String(), strings.ToUpper(marked.String())} {
			for _, ext := range exts {
				path := "src/file" + ext
				c := newChange(path, text)
				got, gotCode := c.signals(path)
				for _, l := range c.lines {
					if l.ascii {
						ascii++
					}
				}
				unfiltered(c)
				want, wantCode := c.signals(path)
				if !reflect.DeepEqual(got, want) || gotCode != wantCode {
					t.Fatalf("%q as %s: hits with the literal test %v (code %v), without %v (code %v)", text, ext, got, gotCode, want, wantCode)
				}
				checked++
				hits += len(got)
			}
		}
	}
	if hits < checked || ascii == 0 {
		t.Fatalf("%d changes gave %d hits over %d ASCII lines: the comparison proves little", checked, hits, ascii)
	}
}

// corpusLines returns up to n distinct non-blank lines: the sample diffs'
// and this package's tests' first, then the project's other Go files'.
func corpusLines(t *testing.T, n int) []string {
	t.Helper()
	var paths []string
	for _, glob := range []string{"../../testdata/diffs/*.diff", "*_test.go"} {
		m, _ := filepath.Glob(glob)
		paths = append(paths, m...)
	}
	err := filepath.WalkDir(filepath.Join("..", ".."), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var lines []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			l = strings.TrimSpace(strings.TrimLeft(l, "+- "))
			if l == "" || seen[l] {
				continue
			}
			seen[l] = true
			if lines = append(lines, l); len(lines) == n {
				return lines
			}
		}
	}
	return lines
}

// unfiltered makes every line of c run every pattern.
func unfiltered(c *change) {
	off := func(ls []codeLine) {
		for i := range ls {
			ls[i].ascii = false
		}
	}
	off(c.lines)
	for i := range c.removed {
		off(c.removed[i])
	}
	for i := range c.added {
		off(c.added[i])
	}
}

func TestRequiredLiterals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		expr string
		want []string // nil: no literal is required
	}{
		{`\bchan\b|<-`, []string{"chan", "<-"}},
		{`(?i)\bParse\w*\(`, []string{"parse"}},
		{`\bif\s*\(`, []string{"if"}},
		{`a+bcd`, []string{"bcd"}},
		{`(ab){2,}`, []string{"ab"}},
		{`(ab)?c`, []string{"c"}},
		{`(ab)*`, nil},
		{`\w+`, nil},
		{`foo|\d+`, nil},
		{`^$`, nil},
		{`é`, nil},
		{`\b(nil|null)\b`, []string{"nil", "null"}},
		{`\bThread\.(new|start)\b`, []string{"thread.new", "thread.start"}},
		{`\buse(Layout)?Effect\(`, []string{"uselayouteffect(", "useeffect("}},
		{`x\w+(ab|cd)`, []string{"ab", "cd"}},
	}
	for _, c := range cases {
		re, err := syntax.Parse(c.expr, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := requiredLiterals(re.Simplify())
		if !ok {
			got = nil
		}
		slices.Sort(got)
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("requiredLiterals(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}

// A case-insensitive pattern still matches a line whose letters fold onto
// ASCII from outside it (ſ is s, K is the Kelvin sign).
func TestLinePatternFoldsOutsideASCII(t *testing.T) {
	t.Parallel()
	p := compileLine(`(?i)secret|token`)
	for _, text := range []string{"a ſecret here", "a to\u212Aen here", "a Secret here"} {
		l := codeLine{text: text}
		l.lower, l.ascii = lowerASCII(text)
		if !p.match(l) {
			t.Errorf("%q did not match", text)
		}
	}
	l := codeLine{text: "nothing here"}
	l.lower, l.ascii = lowerASCII(l.text)
	if p.match(l) {
		t.Error("a line without the words matched")
	}
}
