package render

import (
	"cmp"
	"slices"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// thresholdTolerance absorbs floating-point rounding so a finding whose
// confidence was computed to sit exactly on the threshold (0.75 × 0.8) is
// not dropped for being 1e-16 short.
const thresholdTolerance = 1e-9

// Select chooses the findings a report shows. Only active findings count.
// Exact duplicates — same file, same risk type, overlapping lines and the same
// description once case, punctuation and spacing are ignored — are reduced to
// the one with the highest confidence (ties: lowest ID). A finding is kept
// when its confidence is at or above its risk type's entry in overrides, or
// threshold when there is none; the other active findings are returned in
// below, each with Why saying which stage kept it under its threshold. Both lists are ordered by severity (worst first), then file, then
// first line, then ID, and are never nil.
func Select(findings []Finding, threshold float64, overrides map[review.RiskType]float64) (kept, below []Finding) {
	cands := make([]Finding, 0, len(findings))
	for _, f := range findings {
		if f.Status == review.StatusActive {
			cands = append(cands, f)
		}
	}
	slices.SortStableFunc(cands, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(review.ClampConfidence(b.Confidence), review.ClampConfidence(a.Confidence)),
			cmp.Compare(a.ID, b.ID),
		)
	})

	type dupKey struct {
		file     string
		riskType review.RiskType
		text     string
	}
	seen := make(map[dupKey][][2]int)
	kept, below = []Finding{}, []Finding{}
	for _, f := range cands {
		k := dupKey{cleanPath(f.File), f.RiskType, normaliseText(f.Description)}
		start, end := lineRange(f.Finding)
		if slices.ContainsFunc(seen[k], func(r [2]int) bool { return start <= r[1] && r[0] <= end }) {
			continue
		}
		seen[k] = append(seen[k], [2]int{start, end})

		th := threshold
		if o, ok := overrides[f.RiskType]; ok {
			th = o
		}
		if review.ClampConfidence(f.Confidence)+thresholdTolerance >= th {
			kept = append(kept, f)
		} else {
			why := WhyBelow(f, th)
			f.Why = &why
			below = append(below, f)
		}
	}
	slices.SortFunc(kept, reportOrder)
	slices.SortFunc(below, reportOrder)
	return kept, below
}

// SortFindings puts findings in report order (see reportOrder), for a
// caller that merges the results of several Select calls.
func SortFindings(fs []Finding) { slices.SortFunc(fs, reportOrder) }

// reportOrder orders findings for display: severity (worst first), file,
// first line, ID.
func reportOrder(a, b Finding) int {
	as, _ := lineRange(a.Finding)
	bs, _ := lineRange(b.Finding)
	return cmp.Or(
		cmp.Compare(a.Severity.Rank(), b.Severity.Rank()),
		cmp.Compare(a.File, b.File),
		cmp.Compare(as, bs),
		cmp.Compare(a.ID, b.ID),
	)
}
