package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// Reason says why a finding is not reported: the stage that kept it out,
// what that stage concluded (Kind, a stable code) and, in words, why.
type Reason struct {
	// Stage is intent, verify, expert, eval (below the threshold), or
	// manager or report (dropped).
	Stage string
	// Kind is a machine-readable code: for the expert its stop reason
	// (accept_check_failed, repeat_cycle, …) or verdict, for verify and eval
	// their verdict, for a dropped finding its drop-reason code.
	Kind string
	// Threshold is the confidence the finding was held to; 0 for a
	// dropped finding, which no threshold decided.
	Threshold float64
	// Detail explains the decision in one line.
	Detail string
	// FailedChecks names the required accept-gate checks the expert's
	// verdict failed ("specific_evidence store/users.go:22").
	FailedChecks []string
}

// String renders the reason as "stage: detail".
func (w Reason) String() string {
	if w.Stage == "" {
		return w.Detail
	}
	return w.Stage + ": " + w.Detail
}

// expertStops explains the expert stop reasons of runs that ended without
// a verdict the gate let through.
var expertStops = map[string]string{
	"repeat_cycle":              "the same tool call kept returning the same result",
	"missing_completion_signal": "replies kept arriving without a tool call or a verdict",
	"budget_exhausted":          "no verdict by the end of its rounds",
	"timeout":                   "the run ran out of time",
	"error":                     "the run failed",
}

// WhyBelow explains why an active finding ended under threshold (its risk
// type's threshold when it has one). The deciding stage is the last one
// that took the confidence from at or above the threshold to below it;
// when none did, the finding was proposed below it and nothing raised it.
func WhyBelow(f Finding, threshold float64) Reason {
	trail := orderedTrail(f.Trail)
	decisive := -1
	for i, v := range trail {
		if v.ConfidenceBefore+thresholdTolerance >= threshold && v.ConfidenceAfter+thresholdTolerance < threshold {
			decisive = i
		}
	}
	w := Reason{Threshold: threshold}
	if decisive < 0 {
		start := f.Confidence
		if len(trail) > 0 {
			start = trail[0].ConfidenceBefore
		}
		w.Stage, w.Kind = string(review.StageIntent), "low_confidence"
		w.Detail = fmt.Sprintf("proposed with confidence %.2f, under the threshold %.2f", start, threshold)
		if len(trail) > 0 {
			w.Detail += ", and no later stage raised it"
		}
		return w
	}
	v := trail[decisive]
	w.Stage, w.Kind = v.Stage, v.Verdict
	why := reasonText(v)
	switch review.Stage(v.Stage) {
	case review.StageVerify:
		switch v.Verdict {
		case review.VerdictUnanchored:
			w.Detail = "not anchored" + dash(why)
		case review.VerdictAnchored:
			w.Kind = "lowered"
			w.Detail = fmt.Sprintf("anchored, but the verifier lowered the confidence to %.2f%s", v.ConfidenceAfter, dash(why))
		default:
			w.Detail = orDash(v.Verdict) + dash(why)
		}
	case review.StageExpert:
		expertReason(&w, f, v, why)
	case review.StageEval:
		w.Detail = orDash(v.Verdict) + dash(why)
		if v.Verdict == review.VerdictUncertain {
			w.Detail = fmt.Sprintf("uncertain, confidence × %.1f%s", review.UncertainRatio, dash(why))
		}
	default:
		w.Detail = orDash(v.Verdict) + dash(why)
	}
	// The eval gate may confirm a finding it cannot raise: say so, or the
	// reader sees a confirmation next to a finding that was not reported.
	for _, later := range trail[decisive+1:] {
		if later.Stage == string(review.StageEval) && later.Verdict == review.VerdictConfirmed && v.Stage == string(review.StageExpert) {
			w.Detail = strings.TrimRight(w.Detail, ".") + "; the eval gate confirmed it, but eval raises only what the expert established"
		}
	}
	return w
}

// expertReason fills in the expert's part: its stop reason, and for a
// verdict the gate refused, the checks that failed.
func expertReason(w *Reason, f Finding, v Verdict, why string) {
	stop := stopReason(f)
	if s, ok := bracketed(v.Reason); ok && f.Expert == nil {
		stop = s
	}
	switch {
	case stop == review.ExpertAcceptCheckFailed:
		w.Kind = stop
		var failed []string
		if f.Expert != nil {
			for _, c := range f.Expert.FailedChecks {
				w.FailedChecks = append(w.FailedChecks, c.Name())
				failed = append(failed, "✗ "+c.Name()+dashColon(c.Detail))
			}
			if len(failed) == 0 {
				// A report decoded without check details still lists
				// the checks as "✗ kind location match".
				for _, e := range f.Expert.Evidence {
					if name, ok := strings.CutPrefix(e, "✗ "); ok {
						w.FailedChecks = append(w.FailedChecks, name)
						failed = append(failed, e)
					}
				}
			}
		}
		w.Detail = stop
		if len(failed) > 0 {
			w.Detail += " — " + strings.Join(failed, "; ")
		} else if why != "" {
			w.Detail += " — " + why
		}
	case expertStops[stop] != "":
		w.Kind = stop
		w.Detail = fmt.Sprintf("%s (%s), no verdict", stop, expertStops[stop])
		if v.Verdict == review.VerdictFailed {
			w.Detail = fmt.Sprintf("%s (%s)", stop, expertStops[stop])
		}
		w.Detail += dash(why)
	case v.Verdict == review.VerdictConfirmed:
		w.Detail = fmt.Sprintf("confirmed, but only at confidence %.2f%s", v.ConfidenceAfter, dash(why))
	default:
		w.Detail = orDash(v.Verdict) + dash(why)
	}
}

// WhyDropped explains why triage (or the report, for a location the head
// file does not have) dropped or merged a finding. nums maps finding IDs to
// their numbers in the report.
func WhyDropped(f Finding, nums map[int64]int) Reason {
	code, detail, _ := strings.Cut(f.DropReason, ":")
	code, detail = strings.TrimSpace(code), strings.TrimSpace(detail)
	w := Reason{Stage: string(review.StageManager), Kind: code}
	if f.Status == review.StatusMerged || code == "duplicate_of" {
		w.Kind = "duplicate_of"
		target := "another finding"
		if n, ok := nums[f.MergedInto]; ok && f.MergedInto != 0 {
			target = "#" + strconv.Itoa(n)
		}
		w.Detail = "dropped as a duplicate of " + target
		return w
	}
	switch code {
	case "far_from_change":
		w.Detail = "dropped, too far from a change" + paren(detail)
	case "file_not_in_change":
		w.Detail = "dropped, its file is not part of the change"
	case "invalid_range":
		w.Detail = "dropped, invalid line range" + paren(detail)
	case "cap_per_file":
		w.Detail = "dropped, beyond the cap per file" + paren(detail)
	case "cap_per_risk_type":
		w.Detail = "dropped, beyond the cap per risk type" + paren(detail)
	case "cap_total":
		w.Detail = "dropped, beyond the cap on findings per review" + paren(detail)
	case "line_out_of_range":
		w.Stage = string(review.StageReport)
		w.Detail = "dropped, the cited lines are not in the head file" + paren(detail)
	case "":
		w.Detail = "dropped"
	default:
		w.Detail = "dropped: " + f.DropReason
	}
	return w
}

// stopReason is the expert run's stop reason as the report states it.
// Runs stored before "inconclusive" was a stop reason said "accepted" for
// a submitted inconclusive verdict; they read as what they were, so that
// "accepted" never sits next to a verdict that established nothing.
func stopReason(f Finding) string {
	if f.Expert == nil {
		return ""
	}
	stop := f.Expert.StopReason
	if stop == "accepted" {
		for _, v := range f.Trail {
			if v.Stage == string(review.StageExpert) && v.Verdict == review.VerdictInconclusive {
				return review.VerdictInconclusive
			}
		}
	}
	return stop
}

// whyNot returns the reason a finding that is not reported carries: the
// one decoded with it, else the one derived from its trail.
func whyNot(f Finding, below bool, threshold float64, nums map[int64]int) Reason {
	switch {
	case f.Why != nil:
		return *f.Why
	case below:
		return WhyBelow(f, threshold)
	}
	return WhyDropped(f, nums)
}

// reasonText is a verdict's reason without the expert's "[stop_reason]"
// prefix, on one line; its first evidence item when it gave no reason.
func reasonText(v Verdict) string {
	r := v.Reason
	if _, ok := bracketed(r); ok {
		_, r, _ = strings.Cut(r, "]")
	}
	r = oneLine(r)
	if r == "" && len(v.Evidence) > 0 && v.Stage != string(review.StageExpert) {
		r = oneLine(v.Evidence[0])
	}
	return truncate(r, 300)
}

// bracketed reads the "[stop_reason] " prefix the expert puts before the
// reason of a run that did not end accepted.
func bracketed(s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, "[")
	if !ok {
		return "", false
	}
	stop, _, ok := strings.Cut(rest, "]")
	if !ok || stop == "" || strings.ContainsAny(stop, " \n") {
		return "", false
	}
	return stop, true
}

func dash(s string) string {
	if s == "" {
		return ""
	}
	return " — " + s
}

func dashColon(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
