package llmfake

import (
	"context"
	"encoding/json"
	"testing"
)

const polyglot = "../../testdata/eval/polyglot"

func loadPolyglot(t *testing.T) *GoldenReviewer {
	t.Helper()
	g, err := NewGoldenReviewer(context.Background(), polyglot)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The reviewer knows every located golden issue of the dataset, with the
// code to search for: the snippet, or the longest line of its range.
func TestGoldenReviewerLoadsTheDataset(t *testing.T) {
	g := loadPolyglot(t)
	if g.Issues() != 12 {
		t.Errorf("%d issues, want 12", g.Issues())
	}
	files := map[string]bool{}
	for _, d := range g.decoys {
		files[d.caseName+" "+d.file] = true
		if !farFrom(g.issues, d.file, d.decoyLine, 4) {
			t.Errorf("decoy %s:%d is near a golden issue", d.file, d.decoyLine)
		}
	}
	if g.Decoys() != 7 || len(files) != 7 {
		t.Errorf("%d decoys in %d files, want one in each of the 7 changed files", g.Decoys(), len(files))
	}
	codes := map[string]string{}
	for _, k := range g.issues {
		codes[k.file+":"+itoa(k.start)] = k.code
	}
	if got := codes["cache/stats.go:23"]; got != "s.hits[key]++" {
		t.Errorf("derived code of the race: %q", got)
	}
	if got := codes["api/users.go:38"]; got != "first := users[0]" {
		t.Errorf("snippet of the bounds issue: %q", got)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
