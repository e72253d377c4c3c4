package eval_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/stages/eval"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

func TestApplyFollowsTheRuleWhateverTheModelSays(t *testing.T) {
	t.Parallel()
	cases := []struct {
		expert  float64
		by      string // the expert's verdict
		verdict string
		want    float64
	}{
		{0.9, "confirmed", "confirmed", 0.9}, {0.5, "confirmed", "confirmed", 0.7}, {0.7, "confirmed", "confirmed", 0.7},
		// Issue 11 point 2: eval only confirms what the expert established;
		// disputed ends at min(expert, 0.3).
		{0.5, "inconclusive", "confirmed", 0.5}, {0.5, "", "confirmed", 0.5},
		{0.95, "confirmed", "disputed", 0.3}, {0.1, "confirmed", "disputed", 0.1},
		{0.9, "confirmed", "uncertain", 0.72}, {0.5, "inconclusive", "uncertain", 0.4},
		{0.5, "confirmed", "nonsense", 0.4},
	}
	for _, c := range cases {
		got, _ := eval.Apply(c.expert, c.by, c.verdict)
		if d := got - c.want; d > 1e-9 || d < -1e-9 {
			t.Errorf("Apply(%v, %s) = %v, want %v", c.expert, c.verdict, got, c.want)
		}
	}
}

// The seed's test: a high-confidence false positive (a field the schema
// declares non-null reported as possibly null) that the eval model
// disputes ends at or below 0.4, though the model claims 0.95.
func TestDisputedFalsePositiveIsDemoted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	client, srv := stagetest.LLM(t, llmfake.Static(llmfake.JSON(map[string]any{
		"claim":            "If user.email can be null, the schema at line 3 should allow null",
		"counter_evidence": "line 3 declares email String NOT NULL",
		"verdict":          "disputed", "reason": "the column is declared non-null", "final_confidence": 0.95,
	})))
	src := "model User {\n  id Int @id\n  email String @unique\n}\n"
	id, fs := stagetest.Review(t, st, config.Default(), review.StageEval,
		[]stagetest.File{{Path: "schema.prisma", Content: src, Changed: []int{3}}},
		[]review.Finding{{RiskType: review.Robustness, File: "schema.prisma", LineStart: 3, LineEnd: 3,
			Description: "email may be null and crash the mailer", Severity: review.High, Confidence: 0.92}})
	h := &eval.Handler{Store: st, LLM: client, Prompts: stagetest.Prompts(t)}
	if err := h.Work(ctx, stagetest.Job(t, st, stagetest.Payload(id, review.StageEval, fs[0]))); err != nil {
		t.Fatal(err)
	}
	v, ok := stagetest.Verdict(t, st, id, fs[0].ID, review.StageEval)
	if !ok || v.Verdict != review.VerdictDisputed || v.ConfidenceAfter > 0.4 || v.ConfidenceBefore != 0.92 {
		t.Fatalf("eval verdict: %+v", v)
	}
	f, _ := st.GetFinding(ctx, fs[0].ID)
	if f.Confidence > 0.4 {
		t.Fatalf("finding confidence %v after a disputed eval", f.Confidence)
	}
	req := srv.Requests()[0]
	if llmfake.SchemaName(req) != eval.SchemaName {
		t.Errorf("schema name %q", llmfake.SchemaName(req))
	}
	if !strings.Contains(req.Messages[len(req.Messages)-1].Content, "email may be null") {
		t.Errorf("the reviewer was not shown the expert's conclusion")
	}
}
