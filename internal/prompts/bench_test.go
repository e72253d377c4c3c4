package prompts

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/diff"
)

// BenchmarkDetectSignals runs the detector table over the project's sample
// diffs (testdata/diffs), every file of every language: the work an intent
// item does for each file it plans.
func BenchmarkDetectSignals(b *testing.B) {
	names, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "diffs", "*.diff"))
	var files []*diff.File
	size := 0
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		fs, err := diff.Parse(data)
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		files = append(files, fs...)
		size += len(data)
	}
	if len(files) == 0 {
		b.Fatal("no sample diffs")
	}
	texts := make([]string, len(files))
	for i, f := range files {
		texts[i] = f.Text()
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for range b.N {
		for i, f := range files {
			DetectSignals(f.Path(), texts[i])
		}
	}
}
