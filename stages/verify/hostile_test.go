package verify_test

import (
	"context"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/internal/untrusted"
	"github.com/reviewfleet/reviewfleet/stages/verify"
)

// TestVerifyFencesTheFindingAndItsFile runs the handler on a finding whose
// file name, description and suggestion carry injections, in code that
// carries one too: every hostile line of the prompt is inside its fence.
func TestVerifyFencesTheFindingAndItsFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	client, srv := stagetest.LLM(t, llmfake.Static(llmfake.JSON(map[string]any{"anchored": true, "evidence": "seen", "adjusted_confidence": 0.8})))
	content, diffText := stagetest.HostileFile()
	id, fs := stagetest.Review(t, st, config.Default(), review.StageVerify,
		[]stagetest.File{{Path: stagetest.HostileName, Content: content, Changed: []int{2, 3, 4, 5, 6, 7}, Diff: diffText}},
		[]review.Finding{{RiskType: review.Robustness, File: stagetest.HostileName, LineStart: 2, LineEnd: 3,
			Description: stagetest.HostileDescription, Suggestion: stagetest.HostileMessage, Severity: review.High, Confidence: 0.7}})
	h := &verify.Handler{Store: st, LLM: client, Prompts: stagetest.Prompts(t)}
	if err := h.Work(ctx, stagetest.Job(t, st, stagetest.Payload(id, review.StageVerify, fs[0]))); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if n := stagetest.CheckFenced(t, reqs, stagetest.Hostile); n != 2 {
		t.Errorf("%d messages checked, want 2", n)
	}
	user := reqs[0].Messages[1].Content
	for _, want := range []string{"- file: " + untrusted.Name(stagetest.HostileName), "q7 map written without its lock", "diff of " + untrusted.Label(untrusted.Name(stagetest.HostileName))[:40]} {
		if !strings.Contains(user, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, user)
		}
	}
}
