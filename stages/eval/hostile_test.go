package eval_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/stages/eval"
	"github.com/reviewfleet/reviewfleet/store"
)

// TestEvalFencesTheClaimAndTheExpertsEvidence runs the handler on a
// finding whose file name, description and suggestion carry injections,
// after an expert whose evidence quotes hostile code and names the hostile
// file: every hostile line of the prompt is inside its fence.
func TestEvalFencesTheClaimAndTheExpertsEvidence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	client, srv := stagetest.LLM(t, llmfake.Static(llmfake.JSON(map[string]any{
		"claim": "c", "counter_evidence": "none", "verdict": "confirmed", "reason": "r", "final_confidence": 0.8})))
	content, diffText := stagetest.HostileFile()
	id, fs := stagetest.Review(t, st, config.Default(), review.StageExpert,
		[]stagetest.File{{Path: stagetest.HostileName, Content: content, Changed: []int{2, 3, 4, 5, 6, 7}, Diff: diffText}},
		[]review.Finding{{RiskType: review.Robustness, File: stagetest.HostileName, LineStart: 2, LineEnd: 3,
			Description: stagetest.HostileDescription, Suggestion: stagetest.HostileMessage, Severity: review.High, Confidence: 0.7}})
	evidence, _ := json.Marshal([]string{"passed content_contains " + stagetest.HostileName + ":2-3 — " + stagetest.HostileDescription})
	if err := st.FinishVerdictItem(ctx, pipeline.FindingKey(fs[0].ID), review.Verdict{ReviewID: id, FindingID: fs[0].ID, Stage: review.StageExpert,
		Verdict: review.VerdictConfirmed, ConfidenceBefore: 0.7, ConfidenceAfter: 0.8, Reason: stagetest.HostileDescription, Evidence: evidence}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Advance(ctx, id, review.StageExpert, review.StageEval, func(context.Context, *store.Tx) ([]review.Item, error) {
		return []review.Item{{Key: pipeline.FindingKey(fs[0].ID)}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	h := &eval.Handler{Store: st, LLM: client, Prompts: stagetest.Prompts(t)}
	if err := h.Work(ctx, stagetest.Job(t, st, stagetest.Payload(id, review.StageEval, fs[0]))); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if n := stagetest.CheckFenced(t, reqs, stagetest.Hostile); n != 2 {
		t.Errorf("%d messages checked, want 2", n)
	}
	user := reqs[0].Messages[1].Content
	for _, want := range []string{"- expert verdict: confirmed", "evidence checked against the repository: passed", "- suggested fix: Fix the login check."} {
		if !strings.Contains(user, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, user)
		}
	}
}
