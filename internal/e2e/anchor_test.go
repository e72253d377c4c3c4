package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// A finding cited on lines past the end of its file (but within the anchor
// window of a change, so the manager keeps it) comes out of verify at the
// floor, is not investigated, is not cross-examined, and never reaches the
// report or the SARIF log — however sure every model is.
func TestFindingOutsideTheFileIsNeverReported(t *testing.T) {
	t.Parallel()
	sure := func(_ context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		switch llmfake.SchemaName(req) {
		case "reviewfleet_intent":
			if !strings.Contains(llmfake.LastUser(req), "### File: api/auth.go") {
				return llmfake.JSON(map[string]any{"findings": []any{}})
			}
			// api/auth.go has 15 lines; line 14 changed.
			return llmfake.JSON(map[string]any{"findings": []map[string]any{{
				"risk_type": "robustness", "file": "api/auth.go", "line_start": 17, "line_end": 18,
				"description": "phantom nil dereference", "suggestion": "check", "quote": "", "fix": "", "severity": "critical", "confidence": 0.99,
			}}})
		case "reviewfleet_verify":
			return llmfake.JSON(map[string]any{"anchored": true, "evidence": "trust me", "adjusted_confidence": 0.99})
		case "reviewfleet_eval":
			return llmfake.JSON(map[string]any{"claim": "c", "counter_evidence": "none", "verdict": "confirmed", "reason": "r", "final_confidence": 0.99})
		}
		return llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{"verdict": "confirmed", "confidence": 0.99, "reasoning": "sure",
			"evidence": []map[string]any{{"kind": "file_exists", "path": "api/auth.go", "required": true}}}))
	}
	f := newFleet(t, sure, nil)
	r := f.review(t, demoRepo(t))
	if r.Status != review.ReviewDone {
		t.Fatalf("status %s: %s", r.Status, r.Error)
	}
	ctx := context.Background()
	fs, _ := f.sub.Store.ListFindings(ctx, r.ID)
	if len(fs) != 1 {
		t.Fatalf("findings %+v", fs)
	}
	byStage := verdictsByStage(t, f.sub.Store, r.ID)
	if v := byStage[review.StageVerify]; len(v) != 1 || v[0].ConfidenceAfter > 0.3 || v[0].Verdict != review.VerdictUnanchored {
		t.Fatalf("verify: %+v", v)
	}
	if v := byStage[review.StageExpert]; len(v) != 1 || v[0].Verdict != review.VerdictSkipped {
		t.Fatalf("expert: %+v", v)
	}
	if len(byStage[review.StageEval]) != 0 {
		t.Fatalf("eval ran on an unanchored finding: %+v", byStage[review.StageEval])
	}
	if fs[0].Confidence > 0.3 {
		t.Fatalf("final confidence %v", fs[0].Confidence)
	}
	rep, _ := f.sub.Store.GetReport(ctx, r.ID)
	var sarif struct {
		Runs []struct {
			Results []any `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(rep.SARIF, &sarif); err != nil || len(sarif.Runs[0].Results) != 0 {
		t.Fatalf("SARIF reports a location that does not exist: %s", rep.SARIF)
	}
}
