package review

// ExpertAcceptCheckFailed is the expert outcome of a verdict whose evidence
// failed the accept gate (stored as verdict "inconclusive" with that stop
// reason). It never counts as established.
const ExpertAcceptCheckFailed = "accept_check_failed"

// Caps of the confidence rule (seed 000): a disputed or refuted finding
// ends at most at DisputedCap; an eval that confirms an established expert
// conclusion raises it to at least ConfirmedFloor.
const (
	DisputedCap    = 0.3
	ConfirmedFloor = 0.7
	UncertainRatio = 0.8
)

// Outcome is what the stages established about one finding, as it enters
// the confidence rule. An empty stage outcome means the stage did not run
// (disabled, skipped, or not reached yet) and leaves the confidence alone.
type Outcome struct {
	// Start is the confidence before the first stage given here: the
	// intent confidence for the whole path, or the confidence a later
	// stage received.
	Start float64
	// Floor is harness.verify_confidence_floor: where unanchored findings,
	// expert conclusions that were not established and failed expert runs
	// end at most.
	Floor float64

	// Verify is VerdictAnchored, VerdictUnanchored or "".
	Verify string
	// VerifyAdjusted is the verify model's adjusted_confidence; 0 or less
	// means none was given.
	VerifyAdjusted float64

	// Expert is VerdictConfirmed (evidence accepted by the gate),
	// VerdictRefuted, VerdictInconclusive, ExpertAcceptCheckFailed,
	// VerdictFailed (the run timed out or failed) or "".
	Expert string
	// ExpertConfidence is the confidence the expert run ended with.
	ExpertConfidence float64

	// Eval is VerdictConfirmed, VerdictDisputed, VerdictUncertain or "".
	Eval string
}

// Confidence is the whole confidence rule of the pipeline, written once
// (README, "The pipeline"). Every stage computes its result with it.
//
//	verify  anchored    → min(c, adjusted)   (adjusted only lowers)
//	        unanchored  → min(c, floor, adjusted)
//	expert  confirmed   → expert             (evidence passed the accept gate)
//	        refuted     → min(c, expert, 0.3)
//	        inconclusive, accept_check_failed → min(c, expert, floor)
//	        failed      → min(c, floor)      (a failed run never raises)
//	eval    confirmed   → max(c, 0.7) only when the expert confirmed; else c
//	        disputed    → min(c, 0.3)
//	        uncertain   → 0.8 × c
//
// Each step applied to its own output gives the same output, so a later
// stage may pass the confidence it received as Start together with the
// earlier outcomes it depends on (eval passes the expert's verdict).
func Confidence(o Outcome) float64 {
	c := ClampConfidence(o.Start)
	adj := ClampConfidence(o.VerifyAdjusted)
	switch o.Verify {
	case VerdictAnchored:
		if adj > 0 {
			c = min(c, adj)
		}
	case VerdictUnanchored:
		c = min(c, o.Floor)
		if adj > 0 {
			c = min(c, adj)
		}
	}
	e := ClampConfidence(o.ExpertConfidence)
	switch o.Expert {
	case VerdictConfirmed:
		c = e
	case VerdictRefuted:
		c = min(c, e, DisputedCap)
	case VerdictInconclusive, ExpertAcceptCheckFailed:
		// Not established: never reported above the threshold.
		c = min(c, e, o.Floor)
	case VerdictFailed:
		c = min(c, o.Floor)
	}
	switch o.Eval {
	case VerdictConfirmed:
		// Eval may only confirm what the expert established.
		if o.Expert == VerdictConfirmed {
			c = max(c, ConfirmedFloor)
		}
	case VerdictDisputed:
		c = min(c, DisputedCap)
	case VerdictUncertain:
		c = UncertainRatio * c
	}
	return ClampConfidence(c)
}
