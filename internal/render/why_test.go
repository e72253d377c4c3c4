package render

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// step builds a trail step.
func step(stage, verdict string, before, after float64, reason string) Verdict {
	return Verdict{Stage: stage, Verdict: verdict, ConfidenceBefore: before, ConfidenceAfter: after, Reason: reason}
}

// Each way a finding can end below the threshold names the stage that put
// it there and why, in the reason, in the Markdown and in the JSON.
func TestWhyBelow(t *testing.T) {
	t.Parallel()
	anchored := step("verify", "anchored", 0.9, 0.9, "The cited line reads: x")
	acfSQL := &ExpertRun{StopReason: "accept_check_failed", Rounds: 2, ToolCalls: 2, FailedChecks: []FailedCheck{
		{Kind: "specific_evidence", Path: "store/users.go", StartLine: 22, EndLine: 22,
			Detail: "no passed content_contains check quotes a full line of store/users.go within 20 lines of 22-22"},
		{Kind: "content_contains", Path: "store/users.go", StartLine: 22, EndLine: 22, Match: "db.Query(q)", Detail: "not found in store/users.go lines 22-22"},
	}}
	tests := []struct {
		name      string
		trail     []Verdict
		expert    *ExpertRun
		start     float64 // the finding's confidence when it has no trail
		stage     string
		kind      string
		detail    string   // substring of the detail
		notDetail string   // must not appear in the detail
		checks    []string // failed checks named
	}{
		{name: "verify: out of range",
			trail: []Verdict{step("verify", "unanchored", 0.8, 0.3, "lines 40-44 are outside api/auth.go, which has 15 lines")},
			stage: "verify", kind: "unanchored", detail: "not anchored — lines 40-44 are outside api/auth.go, which has 15 lines"},
		{name: "verify: lowered while anchored",
			trail: []Verdict{step("verify", "anchored", 0.8, 0.4, "the line is a comment")},
			stage: "verify", kind: "lowered", detail: "anchored, but the verifier lowered the confidence to 0.40 — the line is a comment"},
		{name: "expert: accept check failed, eval confirmed",
			trail: []Verdict{anchored,
				step("expert", "inconclusive", 0.9, 0.3, "[accept_check_failed] The query is built from name."),
				step("eval", "confirmed", 0.3, 0.3, "No escaping.")},
			expert: acfSQL, stage: "expert", kind: "accept_check_failed",
			detail: "accept_check_failed — ✗ specific_evidence store/users.go:22: no passed content_contains check quotes a full line of store/users.go within 20 lines of 22-22; " +
				"✗ content_contains store/users.go:22 \"db.Query(q)\": not found in store/users.go lines 22-22; the eval gate confirmed it, but eval raises only what the expert established",
			checks: []string{"specific_evidence store/users.go:22", `content_contains store/users.go:22 "db.Query(q)"`}},
		{name: "expert: accept check failed, decoded without details",
			trail:  []Verdict{anchored, step("expert", "inconclusive", 0.9, 0.3, "[accept_check_failed] reasoning")},
			expert: &ExpertRun{StopReason: "accept_check_failed", Evidence: []string{`✓ file_exists store/users.go ""`, `✗ specific_evidence store/users.go:22-22 ""`}},
			stage:  "expert", kind: "accept_check_failed", detail: `accept_check_failed — ✗ specific_evidence store/users.go:22-22 ""`,
			notDetail: "eval gate", checks: []string{`specific_evidence store/users.go:22-22 ""`}},
		{name: "expert: stop reason from the verdict when the run is missing",
			trail: []Verdict{anchored, step("expert", "inconclusive", 0.9, 0.3, "[accept_check_failed] The quote was a fragment.")},
			stage: "expert", kind: "accept_check_failed", detail: "accept_check_failed — The quote was a fragment."},
		{name: "expert: refuted",
			trail:  []Verdict{anchored, step("expert", "refuted", 0.9, 0.3, "name is validated by the caller")},
			expert: &ExpertRun{StopReason: "accepted"}, stage: "expert", kind: "refuted", detail: "refuted — name is validated by the caller"},
		{name: "expert: submitted inconclusive",
			trail:  []Verdict{anchored, step("expert", "inconclusive", 0.9, 0.3, "cannot tell without the caller")},
			expert: &ExpertRun{StopReason: "inconclusive"}, stage: "expert", kind: "inconclusive", detail: "inconclusive — cannot tell without the caller"},
		{name: "expert: repeat cycle",
			trail:  []Verdict{anchored, step("expert", "inconclusive", 0.9, 0.3, "[repeat_cycle]")},
			expert: &ExpertRun{StopReason: "repeat_cycle"}, stage: "expert", kind: "repeat_cycle",
			detail: "repeat_cycle (the same tool call kept returning the same result), no verdict"},
		{name: "expert: budget exhausted",
			trail:  []Verdict{anchored, step("expert", "inconclusive", 0.9, 0.3, "[budget_exhausted]")},
			expert: &ExpertRun{StopReason: "budget_exhausted"}, stage: "expert", kind: "budget_exhausted", detail: "budget_exhausted (no verdict by the end of its rounds)"},
		{name: "expert: missing completion",
			trail:  []Verdict{anchored, step("expert", "inconclusive", 0.9, 0.3, "[missing_completion_signal]")},
			expert: &ExpertRun{StopReason: "missing_completion_signal"}, stage: "expert", kind: "missing_completion_signal", detail: "replies kept arriving without a tool call"},
		{name: "expert: timed out",
			trail:  []Verdict{anchored, step("expert", "failed", 0.9, 0.3, "[timeout]")},
			expert: &ExpertRun{StopReason: "timeout"}, stage: "expert", kind: "timeout", detail: "timeout (the run ran out of time)", notDetail: "no verdict"},
		{name: "expert: confirmed at a low confidence",
			trail:  []Verdict{anchored, step("expert", "confirmed", 0.9, 0.5, "probably")},
			expert: &ExpertRun{StopReason: "accepted"}, stage: "expert", kind: "confirmed", detail: "confirmed, but only at confidence 0.50 — probably"},
		{name: "eval: disputed",
			trail: []Verdict{anchored, step("expert", "confirmed", 0.9, 0.9, ""), step("eval", "disputed", 0.9, 0.3, "the caller checks the length first")},
			stage: "eval", kind: "disputed", detail: "disputed — the caller checks the length first"},
		{name: "eval: uncertain",
			trail: []Verdict{anchored, step("expert", "confirmed", 0.7, 0.7, ""), step("eval", "uncertain", 0.7, 0.56, "no caller visible")},
			stage: "eval", kind: "uncertain", detail: "uncertain, confidence × 0.8 — no caller visible"},
		{name: "eval: the last stage that crossed decides",
			trail: []Verdict{step("verify", "anchored", 0.8, 0.5, "weak"), step("expert", "confirmed", 0.5, 0.9, ""), step("eval", "disputed", 0.9, 0.3, "not reachable")},
			stage: "eval", kind: "disputed", detail: "disputed — not reachable"},
		{name: "intent: proposed low",
			trail: []Verdict{step("verify", "anchored", 0.4, 0.4, ""), step("expert", "confirmed", 0.4, 0.45, "")},
			stage: "intent", kind: "low_confidence", detail: "proposed with confidence 0.40, under the threshold 0.60, and no later stage raised it"},
		{name: "intent: no stage ran", start: 0.35,
			stage: "intent", kind: "low_confidence", detail: "proposed with confidence 0.35, under the threshold 0.60", notDetail: "later stage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			conf := tt.start
			if n := len(tt.trail); n > 0 {
				conf = orderedTrail(tt.trail)[n-1].ConfidenceAfter
			}
			f := Finding{Finding: review.Finding{ID: 6, RiskType: review.Authorization, File: "store/users.go", LineStart: 22, LineEnd: 22,
				Severity: review.Critical, Confidence: conf, Status: review.StatusActive, Description: "SQL built from name."},
				Trail: tt.trail, Expert: tt.expert}
			kept, below := Select([]Finding{f}, 0.6, nil)
			if len(kept) != 0 || len(below) != 1 || below[0].Why == nil {
				t.Fatalf("Select kept %d, below %d (why %v)", len(kept), len(below), below)
			}
			why := *below[0].Why
			if why.Stage != tt.stage || why.Kind != tt.kind || why.Threshold != 0.6 {
				t.Errorf("reason %s/%s at %.2f, want %s/%s at 0.60", why.Stage, why.Kind, why.Threshold, tt.stage, tt.kind)
			}
			if !strings.Contains(why.Detail, tt.detail) {
				t.Errorf("detail %q\nlacks %q", why.Detail, tt.detail)
			}
			if tt.notDetail != "" && strings.Contains(why.Detail, tt.notDetail) {
				t.Errorf("detail %q says %q", why.Detail, tt.notDetail)
			}
			if !slices.Equal(why.FailedChecks, tt.checks) {
				t.Errorf("failed checks %q, want %q", why.FailedChecks, tt.checks)
			}

			// The Markdown says it under the finding, the JSON in
			// below_threshold_reason, SARIF in the run's properties.
			r := &Report{Threshold: 0.6, BelowThreshold: below}
			md := Markdown(r)
			line := "  - **Why below 0.60:** " + inline(tt.stage+": "+why.Detail)
			if !strings.Contains(md, line) {
				t.Errorf("Markdown lacks %q:\n%s", line, md)
			}
			doc := decodeJSONMap(t, r)
			got := doc["below_threshold"].([]any)[0].(map[string]any)["below_threshold_reason"].(map[string]any)
			if got["stage"] != tt.stage || got["kind"] != tt.kind || got["detail"] != why.Detail || got["threshold"] != 0.6 {
				t.Errorf("JSON reason = %v", got)
			}
			sarif := sarifBelowOf(t, r)
			if len(sarif) != 1 || sarif[0].Kind != tt.kind || sarif[0].Reason != why.String() || sarif[0].Threshold != 0.6 {
				t.Errorf("SARIF belowThreshold = %+v", sarif)
			}
		})
	}
}

// A risk type's own threshold is the one the reason names.
func TestWhyBelowUsesTheRiskTypeThreshold(t *testing.T) {
	t.Parallel()
	f := Finding{Finding: review.Finding{ID: 1, RiskType: review.Static, File: "a.go", LineStart: 1, LineEnd: 1, Confidence: 0.7, Status: review.StatusActive},
		Trail: []Verdict{step("verify", "anchored", 0.9, 0.9, ""), step("eval", "uncertain", 0.9, 0.7, "maybe")}}
	_, below := Select([]Finding{f}, 0.6, map[review.RiskType]float64{review.Static: 0.8})
	if len(below) != 1 || below[0].Why == nil || below[0].Why.Threshold != 0.8 || below[0].Why.Stage != "eval" {
		t.Fatalf("below = %+v", below)
	}
	if md := Markdown(&Report{Threshold: 0.6, BelowThreshold: below}); !strings.Contains(md, "**Why below 0.80:** eval: uncertain") {
		t.Errorf("Markdown does not name the risk type's threshold:\n%s", md)
	}
}

// Every way triage drops a finding reads as the stage and the cause.
func TestWhyDropped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status review.FindingStatus
		reason string
		merged int64
		stage  string
		kind   string
		text   string
	}{
		{review.StatusMerged, "duplicate_of:7", 7, "manager", "duplicate_of", "manager: dropped as a duplicate of #2"},
		{review.StatusMerged, "duplicate_of:99", 99, "manager", "duplicate_of", "manager: dropped as a duplicate of another finding"},
		{review.StatusDropped, "far_from_change: 42 lines from nearest changed line (window 5)", 0, "manager", "far_from_change",
			"manager: dropped, too far from a change (42 lines from nearest changed line (window 5))"},
		{review.StatusDropped, "cap_total: 15 findings already kept (cap 15)", 0, "manager", "cap_total",
			"manager: dropped, beyond the cap on findings per review (15 findings already kept (cap 15))"},
		{review.StatusDropped, "cap_per_file: 3 findings already kept in a.go (cap 3)", 0, "manager", "cap_per_file",
			"manager: dropped, beyond the cap per file (3 findings already kept in a.go (cap 3))"},
		{review.StatusDropped, "cap_per_risk_type", 0, "manager", "cap_per_risk_type", "manager: dropped, beyond the cap per risk type"},
		{review.StatusDropped, "file_not_in_change", 0, "manager", "file_not_in_change", "manager: dropped, its file is not part of the change"},
		{review.StatusDropped, "line_out_of_range: lines 120-120, but the head version of api/auth.go has 15 lines", 0, "report", "line_out_of_range",
			"report: dropped, the cited lines are not in the head file (lines 120-120, but the head version of api/auth.go has 15 lines)"},
		{review.StatusDropped, "something_new: detail", 0, "manager", "something_new", "manager: dropped: something_new: detail"},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			t.Parallel()
			r := &Report{
				Findings: []Finding{
					{Finding: review.Finding{ID: 3, File: "a.go", LineStart: 1, LineEnd: 1, Confidence: 0.9, Status: review.StatusActive}},
					{Finding: review.Finding{ID: 7, File: "a.go", LineStart: 2, LineEnd: 2, Confidence: 0.9, Status: review.StatusActive}},
				},
				Dropped: []Finding{{Finding: review.Finding{ID: 8, RiskType: review.Static, File: "a.go", LineStart: 3, LineEnd: 3,
					Status: tt.status, DropReason: tt.reason, MergedInto: tt.merged, Description: "d"}}},
			}
			why := WhyDropped(r.Dropped[0], numbers(r))
			if why.Stage != tt.stage || why.Kind != tt.kind || why.String() != tt.text {
				t.Errorf("reason = %s/%s %q, want %s/%s %q", why.Stage, why.Kind, why.String(), tt.stage, tt.kind, tt.text)
			}
			if md := Markdown(r); !strings.Contains(md, "— "+inline(tt.text)+" —") {
				t.Errorf("Markdown lacks %q:\n%s", tt.text, md)
			}
			// The JSON's drop_reason is the structured reason: its code is the kind.
			got := decodeJSONMap(t, r)["dropped"].([]any)[0].(map[string]any)
			if code, _, _ := strings.Cut(got["drop_reason"].(string), ":"); code != tt.kind || got["below_threshold_reason"] != nil {
				t.Errorf("JSON drop_reason = %v, below_threshold_reason %v", got["drop_reason"], got["below_threshold_reason"])
			}
		})
	}
}

func decodeJSONMap(t *testing.T, r *Report) map[string]any {
	t.Helper()
	data, err := JSON(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func sarifBelowOf(t *testing.T, r *Report) []sarifBelow {
	t.Helper()
	data, err := SARIF(r)
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Properties struct {
				BelowThreshold []sarifBelow `json:"belowThreshold"`
			} `json:"properties"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	return log.Runs[0].Properties.BelowThreshold
}
