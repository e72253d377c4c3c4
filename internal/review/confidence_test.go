package review_test

import (
	"math"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// TestConfidenceOverEveryCombination pins the whole confidence rule (seed
// 000: verify floor, eval gate max(expert, 0.7) / 0.3 / 0.8×; issue: eval
// may only confirm what the expert established, a failed run never raises)
// over every verify outcome × expert verdict × eval verdict. Start 0.8,
// floor 0.3, the expert ends at 0.6 whatever its verdict.
func TestConfidenceOverEveryCombination(t *testing.T) {
	t.Parallel()
	type verify struct {
		verdict string
		adj     float64
	}
	verifies := map[string]verify{
		"none":           {"", 0},
		"anchored":       {review.VerdictAnchored, 0},
		"anchored-lower": {review.VerdictAnchored, 0.7},
		"anchored-raise": {review.VerdictAnchored, 0.95}, // adjusted never raises
		"unanchored":     {review.VerdictUnanchored, 0.5},
		"unanchored-low": {review.VerdictUnanchored, 0.1},
	}
	// want: after expert, then after eval none / confirmed / disputed / uncertain.
	rows := []struct {
		verify, expert string
		want           [4]float64
	}{
		{"none", "", [4]float64{0.8, 0.8, 0.3, 0.64}},
		{"none", "confirmed", [4]float64{0.6, 0.7, 0.3, 0.48}},
		{"none", "refuted", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"none", "inconclusive", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"none", "accept_check_failed", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"none", "failed", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"anchored", "", [4]float64{0.8, 0.8, 0.3, 0.64}},
		{"anchored", "confirmed", [4]float64{0.6, 0.7, 0.3, 0.48}},
		{"anchored", "refuted", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"anchored", "inconclusive", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"anchored", "accept_check_failed", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"anchored", "failed", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"anchored-lower", "", [4]float64{0.7, 0.7, 0.3, 0.56}},
		{"anchored-lower", "confirmed", [4]float64{0.6, 0.7, 0.3, 0.48}},
		{"anchored-lower", "refuted", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"anchored-lower", "inconclusive", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"anchored-lower", "accept_check_failed", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"anchored-lower", "failed", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"anchored-raise", "", [4]float64{0.8, 0.8, 0.3, 0.64}},
		{"anchored-raise", "confirmed", [4]float64{0.6, 0.7, 0.3, 0.48}},
		{"anchored-raise", "refuted", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"anchored-raise", "inconclusive", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"anchored-raise", "accept_check_failed", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"anchored-raise", "failed", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"unanchored", "", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"unanchored", "confirmed", [4]float64{0.6, 0.7, 0.3, 0.48}},
		{"unanchored", "refuted", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"unanchored", "inconclusive", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"unanchored", "accept_check_failed", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"unanchored", "failed", [4]float64{0.3, 0.3, 0.3, 0.24}},
		{"unanchored-low", "", [4]float64{0.1, 0.1, 0.1, 0.08}},
		{"unanchored-low", "confirmed", [4]float64{0.6, 0.7, 0.3, 0.48}},
		{"unanchored-low", "refuted", [4]float64{0.1, 0.1, 0.1, 0.08}},
		{"unanchored-low", "inconclusive", [4]float64{0.1, 0.1, 0.1, 0.08}},
		{"unanchored-low", "accept_check_failed", [4]float64{0.1, 0.1, 0.1, 0.08}},
		{"unanchored-low", "failed", [4]float64{0.1, 0.1, 0.1, 0.08}},
	}
	if len(rows) != len(verifies)*6 {
		t.Fatalf("table covers %d of %d verify × expert combinations", len(rows), len(verifies)*6)
	}
	evals := []string{"", review.VerdictConfirmed, review.VerdictDisputed, review.VerdictUncertain}
	for _, r := range rows {
		v := verifies[r.verify]
		for i, ev := range evals {
			o := review.Outcome{Start: 0.8, Floor: 0.3, Verify: v.verdict, VerifyAdjusted: v.adj,
				Expert: r.expert, ExpertConfidence: 0.6, Eval: ev}
			got := review.Confidence(o)
			if math.Abs(got-r.want[i]) > 1e-9 {
				t.Errorf("verify %s, expert %q, eval %q: %v, want %v", r.verify, r.expert, ev, got, r.want[i])
			}
			// Stage by stage (what the stages do) equals the whole path.
			afterVerify := review.Confidence(review.Outcome{Start: 0.8, Floor: 0.3, Verify: v.verdict, VerifyAdjusted: v.adj})
			afterExpert := review.Confidence(review.Outcome{Start: afterVerify, Floor: 0.3, Expert: r.expert, ExpertConfidence: 0.6})
			staged := review.Confidence(review.Outcome{Start: afterExpert, Floor: 0.3, Expert: r.expert, ExpertConfidence: afterExpert, Eval: ev})
			if math.Abs(staged-got) > 1e-9 {
				t.Errorf("staged %s/%s/%q = %v, whole path %v", r.verify, r.expert, ev, staged, got)
			}
		}
	}
}

// TestEvalNeverRaisesWhatTheExpertDidNotEstablish is the check of the
// issue: an inconclusive or accept_check_failed expert followed by an eval
// "confirmed" must not end at 0.70, nor anywhere above the floor.
func TestEvalNeverRaisesWhatTheExpertDidNotEstablish(t *testing.T) {
	t.Parallel()
	for _, e := range []string{review.VerdictInconclusive, review.ExpertAcceptCheckFailed, review.VerdictFailed, ""} {
		got := review.Confidence(review.Outcome{Start: 0.8, Floor: 0.3, Expert: e, ExpertConfidence: 0.9, Eval: review.VerdictConfirmed})
		if got > 0.3 && e != "" {
			t.Errorf("expert %q + eval confirmed ended at %v, above the floor", e, got)
		}
		if got > 0.8 {
			t.Errorf("expert %q + eval confirmed raised 0.8 to %v", e, got)
		}
	}
}
