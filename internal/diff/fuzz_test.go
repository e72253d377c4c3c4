package diff

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range samples {
		f.Add([]byte(s.in))
	}
	f.Add([]byte("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1 @@\n-a\n\\ x\n b\n"))
	f.Add([]byte("Binary files \"a/x y\" and b/z differ\n"))
	f.Add([]byte("--- a/f\n+++ b/f\n@@ -3,0 +4 @@\n+x\r\n@@ -9,2 +10,0 @@\n-y\n-z\n"))
	// The committed diffs of the hostile input corpus.
	hostile, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "hostile", "*", "*.diff"))
	for _, name := range hostile {
		if data, err := os.ReadFile(name); err == nil && len(data) < 64<<10 {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		files, err := Parse(data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *ParseError: %v", err)
			}
			if pe.Line < 1 {
				t.Fatalf("error names line %d", pe.Line)
			}
			return
		}
		for _, file := range files {
			checkInvariants(t, file)
			text := file.Text()
			again, err := Parse([]byte(text))
			if err != nil {
				t.Fatalf("re-parse of Text failed: %v\n%q", err, text)
			}
			if got, want := dump(again), dump([]*File{file}); got != want {
				t.Fatalf("re-parse differs\n got:\n%s\nwant:\n%s\ntext: %q", got, want, text)
			}
			_ = file.Numbered()
			_ = file.ChangedNewLines()
			_, _ = Classify(file, ClassifyOptions{IgnoreGlobs: []string{"**/x*"}})
		}
	})
}

// checkInvariants verifies what every parsed file must satisfy: counts match
// headers, line numbers strictly increase across the file, and every line
// carries the numbers of its sides.
func checkInvariants(t *testing.T, f *File) {
	t.Helper()
	if f.Binary && len(f.Hunks) > 0 {
		t.Fatalf("binary file %q has hunks", f.Path())
	}
	lastOld, lastNew := 0, 0
	for _, h := range f.Hunks {
		oldN, newN := 0, 0
		for _, l := range h.Lines {
			switch l.Kind {
			case Context:
				oldN++
				newN++
			case Added:
				newN++
			case Deleted:
				oldN++
			default:
				t.Fatalf("line kind %q", l.Kind)
			}
			if l.Kind != Added {
				if l.OldNo <= lastOld {
					t.Fatalf("old line number %d does not increase past %d", l.OldNo, lastOld)
				}
				lastOld = l.OldNo
			} else if l.OldNo != 0 {
				t.Fatalf("added line has old number %d", l.OldNo)
			}
			if l.Kind != Deleted {
				if l.NewNo <= lastNew {
					t.Fatalf("new line number %d does not increase past %d", l.NewNo, lastNew)
				}
				lastNew = l.NewNo
			} else if l.NewNo != 0 {
				t.Fatalf("deleted line has new number %d", l.NewNo)
			}
		}
		if oldN != h.OldCount || newN != h.NewCount {
			t.Fatalf("hunk %+v has %d old and %d new lines", h, oldN, newN)
		}
	}
	added := f.AddedLines()
	for i, n := range added {
		if n <= 0 || (i > 0 && n <= added[i-1]) {
			t.Fatalf("AddedLines not ascending and positive: %v", added)
		}
	}
	changed := f.ChangedNewLines()
	for i, n := range changed {
		if n <= 0 || (i > 0 && n <= changed[i-1]) {
			t.Fatalf("ChangedNewLines not ascending and positive: %v", changed)
		}
	}
}
