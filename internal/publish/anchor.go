package publish

import (
	"github.com/google/go-github/v84/github"

	"github.com/reviewfleet/reviewfleet/internal/diff"
)

// Anchors are the lines of a pull request's diff a review comment may sit
// on: per path, each RIGHT-side line of a hunk (added or context) with the
// index of its hunk. GitHub refuses any other line, and a multi-line
// comment whose ends lie in different hunks.
type Anchors map[string]map[int]int

// AnchorsOf reads the anchors from the pull request's files and patches.
// A file without a patch (binary, or too large for the API) has none.
func AnchorsOf(files []*github.CommitFile) Anchors {
	out := Anchors{}
	for _, f := range files {
		name, patch := f.GetFilename(), f.GetPatch()
		lines := map[int]int{}
		out[name] = lines
		if patch == "" {
			continue
		}
		parsed, err := diff.Parse([]byte("--- a/" + name + "\n+++ b/" + name + "\n" + patch + "\n"))
		if err != nil || len(parsed) != 1 {
			continue
		}
		for hi, h := range parsed[0].Hunks {
			for _, l := range h.Lines {
				if l.Kind != diff.Deleted {
					lines[l.NewNo] = hi
				}
			}
		}
	}
	return out
}

// Range returns where a comment on lines start..end of file may sit: the
// whole range when both ends are in one hunk, else the end line or the
// start line alone. ok is false when neither is commentable.
func (a Anchors) Range(file string, start, end int) (from, to int, ok bool) {
	lines := a[file]
	if start > end {
		start, end = end, start
	}
	if start <= 0 || lines == nil {
		return 0, 0, false
	}
	hs, okS := lines[start]
	he, okE := lines[end]
	switch {
	case okS && okE && hs == he:
		return start, end, true
	case okE:
		return end, end, true
	case okS:
		return start, start, true
	}
	return 0, 0, false
}
