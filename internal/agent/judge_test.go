package agent

import (
	"errors"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

func TestJudge(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	const file = "internal/auth/session.go"
	withEvidence := func(items ...map[string]any) string {
		args := strictConfirm()
		args["evidence"] = items
		return mustJSON(t, args)
	}
	exists := map[string]any{"kind": "file_exists", "path": file, "start_line": 0, "end_line": 0, "match": "", "required": true}
	quote := map[string]any{"kind": "content_contains", "path": file, "start_line": 16, "end_line": 17,
		"match": "sess := s.Lookup(id) sess.Expires = sess.Expires.Add(ttl)", "required": true}
	invented := map[string]any{"kind": "content_contains", "path": file, "start_line": 15, "end_line": 18,
		"match": "if sess == nil { return }", "required": true}
	fact := map[string]any{"kind": "tool_fact", "path": "", "start_line": 0, "end_line": 0, "match": "sess := s.byID[id]", "required": true}
	optionalFact := map[string]any{"kind": "tool_fact", "path": "", "start_line": 0, "end_line": 0, "match": "sess := s.byID[id]", "required": false}
	undecided := func(items ...map[string]any) string {
		args := strictConfirm()
		args["verdict"], args["evidence"] = review.VerdictInconclusive, items
		return mustJSON(t, args)
	}

	tests := []struct {
		name       string
		doc        string
		root       string
		factor     float64
		stop       StopReason
		verdict    string
		confidence float64
		failed     []string // details of the failed checks, in order
		errText    string   // substring of Error for StopError
		errIs      error
	}{
		{"accepted", withEvidence(exists, quote), root, 0,
			StopAccepted, review.VerdictConfirmed, 0.9, nil, "", nil},
		{"accepted in a fence with prose", "Verdict below.\n```json\n" + withEvidence(quote) + "\n```\n", root, 0,
			StopAccepted, review.VerdictConfirmed, 0.9, nil, "", nil},
		{"optional tool fact fails alone", withEvidence(quote, optionalFact), root, 0,
			StopAccepted, review.VerdictConfirmed, 0.9, []string{"no tool result of this run contains the match"}, "", nil},
		// An inconclusive verdict establishes nothing: it is never "accepted".
		{"inconclusive, checks pass", undecided(exists), root, 0,
			StopInconclusive, review.VerdictInconclusive, 0.9, nil, "", nil},
		{"inconclusive, a check fails", undecided(invented), root, 0,
			StopAcceptCheckFailed, review.VerdictInconclusive, 0.45, []string{"not found in " + file + " lines 15-18"}, "", nil},
		{"failing quote", withEvidence(exists, invented), root, 0,
			StopAcceptCheckFailed, review.VerdictConfirmed, 0.45, []string{"not found in " + file + " lines 15-18"}, "", nil},
		{"failing quote, own factor", withEvidence(invented), root, 0.4,
			StopAcceptCheckFailed, review.VerdictConfirmed, 0.36, []string{"not found in " + file + " lines 15-18"}, "", nil},
		{"tool fact fails without a run", withEvidence(exists, fact), root, 0,
			StopAcceptCheckFailed, review.VerdictConfirmed, 0.45, []string{"no tool result of this run contains the match"}, "", nil},
		{"garbage", "The finding is real, trust me.", root, 0,
			StopError, review.VerdictInconclusive, 0.4, nil, "no JSON object with a verdict", errNoVerdict},
		{"empty", "", root, 0,
			StopError, review.VerdictInconclusive, 0.4, nil, "no JSON object with a verdict", errNoVerdict},
		{"invalid verdict", `{"verdict":"probably","confidence":1.5,"reasoning":"","evidence":[]}`, root, 0.25,
			StopError, review.VerdictInconclusive, 0.2, nil, "verdict must be confirmed, refuted or inconclusive", nil},
		{"confirmed without required evidence", withEvidence(optionalFact), root, 0,
			StopError, review.VerdictInconclusive, 0.4, nil, "needs at least one required evidence item", nil},
		{"missing snapshot", withEvidence(exists), root + "/missing", 0,
			StopError, review.VerdictInconclusive, 0.4, nil, "open snapshot for finding 7", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := fastConfig()
			cfg.AcceptFailFactor = tt.factor
			res := Judge(sampleTask(tt.root), cfg, []byte(tt.doc))
			if res.StopReason != tt.stop || res.Verdict != tt.verdict || !near(res.Confidence, tt.confidence) {
				t.Fatalf("got %s %s %.3f (%s), want %s %s %.3f", res.StopReason, res.Verdict, res.Confidence, res.Error,
					tt.stop, tt.verdict, tt.confidence)
			}
			if res.Rounds != 1 || res.ToolCalls == nil || len(res.ToolCalls) != 0 || res.Phases == nil || len(res.Phases) != 0 {
				t.Errorf("rounds %d tool calls %#v phases %#v, want 1 and empty, non-nil", res.Rounds, res.ToolCalls, res.Phases)
			}
			if tt.stop == StopError {
				if res.Err == nil || res.Err.Error() != res.Error || !strings.Contains(res.Error, tt.errText) {
					t.Errorf("Err %v, Error %q; want both mentioning %q", res.Err, res.Error, tt.errText)
				}
				if tt.errIs != nil && !errors.Is(res.Err, tt.errIs) {
					t.Errorf("Err %v is not %v", res.Err, tt.errIs)
				}
				if len(res.CheckResults) != 0 {
					t.Errorf("an invalid document was checked: %+v", res.CheckResults)
				}
				return
			}
			if res.Err != nil || res.Error != "" {
				t.Errorf("Err %v Error %q on a judged verdict", res.Err, res.Error)
			}
			if len(res.CheckResults) != len(res.Evidence) || len(res.Evidence) == 0 {
				t.Fatalf("%d check results for %d evidence items", len(res.CheckResults), len(res.Evidence))
			}
			var failed []string
			for _, c := range res.CheckResults {
				if !c.Passed {
					failed = append(failed, c.Detail)
				}
			}
			if strings.Join(failed, "; ") != strings.Join(tt.failed, "; ") {
				t.Errorf("failed checks %q, want %q", failed, tt.failed)
			}
			if !strings.HasPrefix(res.Reasoning, "Lookup returns nil") {
				t.Errorf("reasoning %q, want the document's", res.Reasoning)
			}
		})
	}
}

// near compares confidences computed with a factor.
func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
