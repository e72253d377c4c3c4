package prompts

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/diff"
)

// TestMeasurePrompts prints the progressive-context statistics of real
// diffs. It runs only when PROMPTS_MEASURE_DIFFS lists diff files (separated
// like PATH entries); scripts/measure-prompts.sh generates them. Files the
// pipeline would not review (lock files, generated, binary, deleted) are
// left out, as in the review itself. Each diff file gets a table; then one
// "summary" line per diff file and one for all of them give the files per
// class (signals, fallback, no code) and the mean reductions.
func TestMeasurePrompts(t *testing.T) {
	list := os.Getenv("PROMPTS_MEASURE_DIFFS")
	if list == "" {
		t.Skip("set PROMPTS_MEASURE_DIFFS to diff files to measure")
	}
	s := mustLoad(t)
	var all []FileStat
	var summaries []string
	for _, name := range filepath.SplitList(list) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("read diff: %v", err)
		}
		files, err := diff.Parse(data)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		var stats []FileStat
		for _, f := range files {
			if skip, _ := diff.Classify(f, diff.ClassifyOptions{}); skip {
				continue
			}
			stats = append(stats, s.Stats(f.Path(), f.Text()))
		}
		all = append(all, stats...)
		var b strings.Builder
		if err := WriteStatsTable(&b, stats); err != nil {
			t.Fatal(err)
		}
		label := strings.TrimSuffix(filepath.Base(name), ".diff")
		t.Logf("%s\n%s", label, b.String())
		summaries = append(summaries, fmt.Sprintf("summary %s: %s", label, Summarize(stats)))
	}
	summaries = append(summaries, fmt.Sprintf("summary all: %s", Summarize(all)))
	for _, s := range summaries {
		t.Log(s)
	}
}
