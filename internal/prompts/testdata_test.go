package prompts

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/diff"
)

// The project's own sample diffs (testdata/diffs, one language each) parse,
// select the packs their changes call for, and shrink the prompt.
func TestProjectTestdataDiffs(t *testing.T) {
	t.Parallel()
	want := map[string][]Pack{
		"app/users.py":                 {PackAuthorization, PackLifecycle}, // SQL f-string, mutable default
		"web/Profile.jsx":              {PackConcurrency},                  // async callbacks in forEach
		"svc/Ledger.java":              {PackConcurrency},                  // synchronized removed
		"rails/invoices_controller.rb": {PackAuthorization},                // before_action removed
		"worker/pool.go":               {PackConcurrency, PackIntent},      // goroutine, mixed && / ||
		"docs/README.md":               nil,
		"deploy/values.yaml":           nil,
	}
	set, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "diffs", "*.diff"))
	if len(names) < len(want) {
		t.Fatalf("found %d testdata diffs, want %d", len(names), len(want))
	}
	seen := 0
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		files, err := diff.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, f := range files {
			packs := DetectPacks(f.Path(), f.Text())
			must, ok := want[f.Path()]
			if !ok {
				continue
			}
			seen++
			for _, p := range must {
				if !slices.Contains(packs, p) {
					t.Errorf("%s: packs %v lack %s", f.Path(), packs, p)
				}
			}
			if must == nil && len(packs) != 0 {
				t.Errorf("%s: a change without code selected %v", f.Path(), packs)
			}
			if len(packs) == len(AllPacks) {
				t.Errorf("%s: every pack selected", f.Path())
			}
			if st := set.Stats(f.Path(), f.Text()); st.LineReduction() < 0.2 {
				t.Errorf("%s: prompt only %.0f%% shorter", f.Path(), 100*st.LineReduction())
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("checked %d files, want %d", seen, len(want))
	}
}
