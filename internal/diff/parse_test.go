package diff

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range samples {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := dump(files); got != tc.want {
				t.Errorf("Parse mismatch\n got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	const head = "diff --git a/f b/f\n--- a/f\n+++ b/f\n"
	tests := []struct {
		name     string
		in       string
		wantLine int
		wantMsg  string
	}{
		{
			name:     "body shorter than header at end of input",
			in:       head + "@@ -1,3 +1,3 @@\n a\n-b\n",
			wantLine: 7,
			wantMsg:  "shorter than its header @@ -1,3 +1,3 @@ (line 4) says: 1 old and 2 new lines missing, got end of input",
		},
		{
			name:     "body shorter than header before the next file",
			in:       head + "@@ -1,2 +1,2 @@\n a\n-b\ndiff --git a/g b/g\n",
			wantLine: 7,
			wantMsg:  `1 new lines missing, got "diff --git a/g b/g"`,
		},
		{
			name:     "body longer than header",
			in:       head + "@@ -1 +1 @@\n-a\n+b\n+c\n",
			wantLine: 7,
			wantMsg:  `longer than its header @@ -1,1 +1,1 @@ says: extra line "+c"`,
		},
		{
			name:     "more deleted lines than the old count",
			in:       head + "@@ -1 +1,2 @@\n-a\n-b\n+c\n+d\n",
			wantLine: 6,
			wantMsg:  "more deleted or context lines",
		},
		{
			name:     "more added lines than the new count",
			in:       head + "@@ -1,2 +1 @@\n+c\n+d\n-a\n-b\n",
			wantLine: 6,
			wantMsg:  "more added or context lines",
		},
		{
			name:     "context line when one side is exhausted",
			in:       head + "@@ -1,2 +1 @@\n+c\n a\n-b\n",
			wantLine: 6,
			wantMsg:  "0 new lines missing",
		},
		{
			name:     "hunk header with letters",
			in:       head + "@@ -a +1 @@\n",
			wantLine: 4,
			wantMsg:  `old range "a": "a" is not a number`,
		},
		{
			name:     "hunk header without closing @@",
			in:       head + "@@ -1 +1\n-a\n+b\n",
			wantLine: 4,
			wantMsg:  "no closing @@",
		},
		{
			name:     "hunk range starting at line 0",
			in:       head + "@@ -0,2 +1 @@\n",
			wantLine: 4,
			wantMsg:  "range of 2 lines starts at line 0",
		},
		{
			name:     "hunk count too large",
			in:       head + "@@ -1,99999999999 +1 @@\n",
			wantLine: 4,
			wantMsg:  "too large",
		},
		{
			name:     "overlapping hunks",
			in:       head + "@@ -5,2 +5,2 @@\n a\n b\n@@ -6 +6 @@\n-b\n+c\n",
			wantLine: 7,
			wantMsg:  "overlaps or comes before the previous hunk",
		},
		{
			name:     "change line after a header-only file",
			in:       "diff --git a/f b/f\nold mode 100644\nnew mode 100755\n+stray\n",
			wantLine: 4,
			wantMsg:  `change line "+stray" outside any hunk`,
		},
		{
			name:     "hunk header without a file",
			in:       "@@ -1 +1 @@\n-a\n+b\n",
			wantLine: 1,
			wantMsg:  "outside a file",
		},
		{
			name:     "--- without +++ in a git file",
			in:       "diff --git a/f b/f\n--- a/f\n-a\n",
			wantLine: 3,
			wantMsg:  "not followed by a +++ line",
		},
		{
			name:     "+++ followed by a change line instead of a hunk",
			in:       head + "-a\n+b\n",
			wantLine: 4,
			wantMsg:  `expected a hunk header after the +++ line, got "-a"`,
		},
		{
			name:     "+++ at end of input",
			in:       head,
			wantLine: 4,
			wantMsg:  "input ends after the +++ line",
		},
		{
			name:     "no-newline marker opening a hunk",
			in:       head + "@@ -1 +1 @@\n\\ No newline at end of file\n-a\n+b\n",
			wantLine: 5,
			wantMsg:  "marker with no line before it",
		},
		{
			name:     "combined diff",
			in:       "diff --cc merged.go\nindex 1,2..3\n",
			wantLine: 1,
			wantMsg:  "combined diffs",
		},
		{
			name:     "ambiguous paths and nothing to settle them",
			in:       "diff --git a/x b/y b/z b/w\nold mode 100644\nnew mode 100755\n",
			wantLine: 1,
			wantMsg:  "cannot tell where the old path ends",
		},
		{
			name:     "unterminated quoted path",
			in:       "diff --git \"a/x b/x\n",
			wantLine: 1,
			wantMsg:  "missing closing quote",
		},
		{
			name:     "bad escape in a rename path",
			in:       "diff --git a/x b/y\nrename from \"x\\q\"\nrename to y\n",
			wantLine: 2,
			wantMsg:  `unknown escape \q`,
		},
		{
			name:     "bad similarity",
			in:       "diff --git a/x b/y\nsimilarity index lots\n",
			wantLine: 2,
			wantMsg:  "not a percentage",
		},
		{
			name:     "both sides /dev/null",
			in:       "diff --git a/x b/x\n--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+a\n",
			wantLine: 3,
			wantMsg:  "both sides of the file are /dev/null",
		},
		{
			name:     "empty file mode",
			in:       "diff --git a/x b/x\nnew file mode \n",
			wantLine: 2,
			wantMsg:  `new file mode "" is not an octal file mode`,
		},
		{
			name:     "mode on the index line that is not octal",
			in:       "diff --git a/x b/x\nindex 1111111..2222222 10064z\n",
			wantLine: 2,
			wantMsg:  "not an octal file mode",
		},
		{
			name:     "empty path in the diff --git header",
			in:       "diff --git  x\nold mode 100644\nnew mode 100755\n",
			wantLine: 1,
			wantMsg:  "empty old path",
		},
		{
			name:     "stray line after a complete hunk before the next hunk",
			in:       head + "@@ -1 +1 @@\n-a\n+b\n a\n@@ -5 +5 @@\n-c\n+d\n",
			wantLine: 7,
			wantMsg:  `extra line " a"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files, err := Parse([]byte(tc.in))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse error = %v (files %s), want a *ParseError", err, dump(files))
			}
			if files != nil {
				t.Errorf("Parse returned files along with the error")
			}
			if pe.Line != tc.wantLine {
				t.Errorf("error line = %d, want %d (%v)", pe.Line, tc.wantLine, err)
			}
			if !strings.Contains(pe.Msg, tc.wantMsg) {
				t.Errorf("error message %q does not contain %q", pe.Msg, tc.wantMsg)
			}
			if !strings.HasPrefix(err.Error(), "diff line ") {
				t.Errorf("Error() = %q, want the line number first", err.Error())
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	// Without preamble or trailer every input byte belongs to one file.
	for _, tc := range samples[:6] {
		files, err := Parse([]byte(tc.in))
		if err != nil {
			t.Fatalf("%s: Parse: %v", tc.name, err)
		}
		total := 0
		for _, f := range files {
			if f.Size() <= 0 {
				t.Errorf("%s: %s has size %d", tc.name, f.Path(), f.Size())
			}
			total += f.Size()
		}
		if total != len(tc.in) {
			t.Errorf("%s: file sizes sum to %d, input has %d bytes", tc.name, total, len(tc.in))
		}
	}
}

func TestParseLinesShareNoState(t *testing.T) {
	t.Parallel()
	in := []byte("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n+new\n")
	files, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	copy(in, strings.Repeat("x", len(in)))
	if got := files[0].Hunks[0].Lines[1].Text; got != "new" {
		t.Errorf("line text changed with the input buffer: %q", got)
	}
}

func TestParseRejectsNULInPaths(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"diff --git \"a/x\\000\" \"b/x\\000\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/x\\000\"\n@@ -0,0 +1 @@\n+a\n",
		"--- \"a/x\\000y\"\n+++ \"b/x\\000y\"\n@@ -1 +1 @@\n-a\n+b\n",
	} {
		_, err := Parse([]byte(in))
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "NUL") {
			t.Errorf("Parse(%q) = %v, want a *ParseError about the NUL byte", in, err)
		}
	}
}
