// Package manager is the deterministic triage step between the intent stage
// and verify. Once every intent task of a review has finished, Plan looks at
// all candidate findings at once and decides which ones go on to the LLM
// stages: findings that point outside the change are dropped, near-duplicates
// are merged, and the rest are capped by score so a noisy review cannot fan
// out into hundreds of expensive verify/expert/eval tasks.
//
// The package is pure: no LLM, no I/O, no clock, no randomness. The same
// findings in any order produce the same decisions.
package manager

import (
	"cmp"
	"slices"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// Decision is the manager's verdict on one finding.
type Decision struct {
	// FindingID is the ID of the finding the decision is about.
	FindingID int64
	// Status is review.StatusActive (goes on to verify), review.StatusDropped
	// or review.StatusMerged.
	Status review.FindingStatus
	// Reason is empty for active findings. Otherwise it starts with one of the
	// Reason* codes, optionally followed by ": " and a human-readable detail
	// (duplicates use "duplicate_of:<id>"). ReasonCode extracts the code.
	Reason string
	// MergedInto is the ID of the surviving finding when Status is merged.
	MergedInto int64
	// Score is confidence × type weight × severity weight, the value the caps
	// rank by. It is filled in for every decision, dropped ones included.
	Score float64
	// LineStart and LineEnd are the range the manager worked with: a swapped
	// range is put in order. Callers should store this range for findings
	// that stay active.
	LineStart, LineEnd int
}

// Plan triages findings against the lines a change touched. changed maps a
// file path to the new-side line numbers the change added (plus the line where
// a pure deletion happened); they need not be sorted. It returns exactly one
// Decision per finding, in input order.
//
// The rules apply in order:
//  1. a finding whose file is not in changed is dropped (file_not_in_change);
//     a swapped range is put in order, and a range starting below line 1 is
//     dropped (invalid_range);
//  2. a finding whose range is more than cfg.AnchorWindow lines from every
//     changed line of its file is dropped (far_from_change);
//  3. near-duplicates (same file and risk type, ranges within
//     cfg.MergeLineDistance, description token Jaccard ≥ cfg.MergeSimilarity)
//     are merged, transitively, into the highest-scored member of their group
//     (ties: see better); the survivor's confidence is not changed;
//  4. the remaining findings are kept greedily by descending score (ties:
//     see better) while their file, their risk type and the total are all under
//     their caps; the others are dropped with the cap that stopped them.
//
// File paths are compared after cleaning ("./a/b.go" and "/a/b.go" match
// "a/b.go"). Finding IDs are expected to be unique; when they are not, ties
// fall back to input order.
func Plan(findings []review.Finding, changed map[string][]int, cfg Config) []Decision {
	decisions := make([]Decision, len(findings))
	lines := normaliseChanged(changed)
	w := newWeights(cfg)

	cands := make([]candidate, 0, len(findings))
	for i, f := range findings {
		start, end := f.LineStart, f.LineEnd
		if end < start {
			start, end = end, start
		}
		d := &decisions[i]
		*d = Decision{
			FindingID: f.ID,
			Status:    review.StatusActive,
			Score:     w.score(f),
			LineStart: start,
			LineEnd:   end,
		}
		file := cleanPath(f.File)
		if reason, ok := anchor(file, start, end, lines, cfg.AnchorWindow); !ok {
			d.Status = review.StatusDropped
			d.Reason = reason
			continue
		}
		cands = append(cands, candidate{
			index:    i,
			id:       f.ID,
			file:     file,
			riskType: f.RiskType,
			start:    start,
			end:      end,
			score:    d.Score,
			text:     f.Description,
		})
	}

	survivors := merge(cands, decisions, cfg)
	applyCaps(survivors, decisions, cfg)
	return decisions
}

// candidate is a finding that passed the anchor checks, with the fields the
// later rules need.
type candidate struct {
	index    int // position in the input, also the position of its Decision
	id       int64
	file     string
	riskType review.RiskType
	start    int
	end      int
	score    float64
	text     string
}

// better orders candidates from most to least worth keeping: higher score,
// then by place and text (file, lines, risk type, description), then lower
// ID, then earlier input position. Place and text come before the ID
// because IDs follow the order parallel intent items finished in: ties
// broken by ID would keep different findings in two runs of the same
// review, and a replay would ask about findings the recording never saw.
func better(a, b *candidate) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	if c := cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.start, b.start), cmp.Compare(a.end, b.end),
		cmp.Compare(a.riskType, b.riskType), cmp.Compare(a.text, b.text)); c != 0 {
		return c
	}
	if c := cmp.Compare(a.id, b.id); c != 0 {
		return c
	}
	return cmp.Compare(a.index, b.index)
}

// sortByRank sorts candidates best first (see better).
func sortByRank(cs []*candidate) {
	slices.SortFunc(cs, better)
}
