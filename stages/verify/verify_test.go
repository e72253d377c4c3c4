package verify_test

import (
	"context"
	"os"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/stages/verify"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

const src = "package a\n\nfunc f(xs []int) int {\n\treturn xs[0]\n}\n"

// The seed's test: one finding on a real changed line keeps its
// confidence; one on a line that does not exist ends at most at the floor,
// without any LLM call.
func TestUnanchoredFindingDropsToFloor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	client, srv := stagetest.LLM(t, llmfake.Static(llmfake.JSON(map[string]any{
		"anchored": true, "evidence": "line 4 indexes xs without a length check", "adjusted_confidence": 0.8,
	})))
	cfg := config.Default()
	id, fs := stagetest.Review(t, st, cfg, review.StageVerify,
		[]stagetest.File{{Path: "a.go", Content: src, Changed: []int{4}}},
		[]review.Finding{
			{RiskType: review.Robustness, File: "a.go", LineStart: 4, LineEnd: 4, Description: "xs may be empty", Severity: review.High, Confidence: 0.8},
			{RiskType: review.Robustness, File: "a.go", LineStart: 400, LineEnd: 402, Description: "phantom", Severity: review.High, Confidence: 0.9},
		})
	h := &verify.Handler{Store: st, LLM: client, Prompts: stagetest.Prompts(t)}
	for _, f := range fs {
		if err := h.Work(ctx, stagetest.Job(t, st, stagetest.Payload(id, review.StageVerify, f))); err != nil {
			t.Fatal(err)
		}
	}
	real, _ := stagetest.Verdict(t, st, id, fs[0].ID, review.StageVerify)
	if real.Verdict != review.VerdictAnchored || real.ConfidenceAfter != 0.8 || real.ConfidenceBefore != 0.8 {
		t.Errorf("anchored finding: %+v", real)
	}
	phantom, _ := stagetest.Verdict(t, st, id, fs[1].ID, review.StageVerify)
	if phantom.Verdict != review.VerdictUnanchored || phantom.ConfidenceAfter > 0.3 {
		t.Errorf("finding on a line that does not exist: %+v", phantom)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d LLM calls, want 1 (the out-of-range finding needs none)", n)
	}
	req := srv.Requests()[0]
	if llmfake.SchemaName(req) != verify.SchemaName || req.ResponseFormat.JSONSchema == nil || !req.ResponseFormat.JSONSchema.Strict {
		t.Errorf("request did not ask for strict structured output: %+v", req.ResponseFormat)
	}
}

func TestModelSaysUnanchored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	client, _ := stagetest.LLM(t, func(context.Context, openai.ChatCompletionRequest) llmfake.Reply {
		return llmfake.JSON(map[string]any{"anchored": false, "evidence": "the line returns a constant", "adjusted_confidence": 0.9})
	})
	cfg := config.Default()
	cfg.Harness.VerifyConfidenceFloor = 0.25
	id, fs := stagetest.Review(t, st, cfg, review.StageVerify,
		[]stagetest.File{{Path: "a.go", Content: src, Changed: []int{4}}},
		[]review.Finding{{RiskType: review.Robustness, File: "a.go", LineStart: 4, LineEnd: 4, Description: "x", Severity: review.High, Confidence: 0.7}})
	h := &verify.Handler{Store: st, LLM: client, Prompts: stagetest.Prompts(t)}
	if err := h.Work(ctx, stagetest.Job(t, st, stagetest.Payload(id, review.StageVerify, fs[0]))); err != nil {
		t.Fatal(err)
	}
	v, _ := stagetest.Verdict(t, st, id, fs[0].ID, review.StageVerify)
	if v.ConfidenceAfter != 0.25 {
		t.Fatalf("confidence %v, want the configured floor 0.25 whatever the model's adjusted_confidence", v.ConfidenceAfter)
	}
}

func TestDeterministicChecks(t *testing.T) {
	t.Parallel()
	content := src
	cases := []struct {
		name   string
		f      review.Finding
		ok     bool
		noFile bool
	}{
		{"on a changed line", review.Finding{File: "a.go", LineStart: 4, LineEnd: 4}, true, false},
		{"near a changed line", review.Finding{File: "a.go", LineStart: 2, LineEnd: 2}, true, false},
		{"too far from a change", review.Finding{File: "a.go", LineStart: 1, LineEnd: 1}, false, false},
		{"past the end", review.Finding{File: "a.go", LineStart: 6, LineEnd: 9}, false, false},
		{"line zero", review.Finding{File: "a.go", LineStart: 0, LineEnd: 0}, false, false},
		{"missing file", review.Finding{File: "b.go", LineStart: 1, LineEnd: 1}, false, true},
	}
	for _, c := range cases {
		sf := stagetestFile(content, []int{4})
		if c.noFile {
			sf = nil
		}
		got := verify.Deterministic(c.f, sf, 2)
		if got.OK != c.ok || (!got.OK && got.Reason == "") {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
}

// Issue 11 point 6 and seed 000 (harness_verify_confidence_floor is a
// setting): the prompt states the configured floor, not a literal 0.3, and
// the model's adjusted_confidence lowers an anchored finding.
func TestPromptCarriesTheConfiguredFloorAndAdjustedConfidenceCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	client, srv := stagetest.LLM(t, llmfake.Static(llmfake.JSON(map[string]any{
		"anchored": true, "evidence": "line 4 indexes xs, but callers pass non-empty slices", "adjusted_confidence": 0.55,
	})))
	cfg := config.Default()
	cfg.Harness.VerifyConfidenceFloor = 0.25
	id, fs := stagetest.Review(t, st, cfg, review.StageVerify,
		[]stagetest.File{{Path: "a.go", Content: src, Changed: []int{4}}},
		[]review.Finding{{RiskType: review.Robustness, File: "a.go", LineStart: 4, LineEnd: 4, Description: "xs may be empty", Severity: review.High, Confidence: 0.8}})
	h := &verify.Handler{Store: st, LLM: client, Prompts: stagetest.Prompts(t)}
	if err := h.Work(ctx, stagetest.Job(t, st, stagetest.Payload(id, review.StageVerify, fs[0]))); err != nil {
		t.Fatal(err)
	}
	if v, _ := stagetest.Verdict(t, st, id, fs[0].ID, review.StageVerify); v.ConfidenceAfter != 0.55 {
		t.Errorf("anchored finding with adjusted_confidence 0.55 ended at %v", v.ConfidenceAfter)
	}
	system := srv.Requests()[0].Messages[0].Content
	if !strings.Contains(system, "at most 0.25") || strings.Contains(system, "0.3") || strings.Contains(system, "{{floor}}") {
		t.Errorf("verify prompt does not state the configured floor:\n%s", system)
	}
}
