package expert_test

import (
	"context"
	"errors"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/snapshot"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/stages/expert"
)

// A run cancelled in the middle (a worker shutting down) records nothing
// about the finding and says it was interrupted, so the pipeline gives the
// item back rather than failing it.
func TestCancelledRunRecordsNoVerdict(t *testing.T) {
	t.Parallel()
	st := stagetest.Store(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client, _ := stagetest.LLM(t, func(rctx context.Context, _ openai.ChatCompletionRequest) llmfake.Reply {
		cancel() // the shutdown arrives while the model is thinking
		<-rctx.Done()
		return llmfake.Fail(500, "gone")
	})
	id, fs := stagetest.Review(t, st, config.Default(), review.StageExpert,
		[]stagetest.File{{Path: "a.go", Content: src, Changed: []int{4}}},
		[]review.Finding{{RiskType: review.Robustness, File: "a.go", LineStart: 4, LineEnd: 4, Description: "xs may be empty", Severity: review.High, Confidence: 0.8}})
	h := &expert.Handler{Store: st, LLM: client, Prompts: stagetest.Prompts(t), Snapshots: &snapshot.Cache{Dir: t.TempDir(), Store: st}}
	err := h.Work(ctx, stagetest.Job(t, st, stagetest.Payload(id, review.StageExpert, fs[0])))
	if !errors.Is(err, context.Canceled) || pipeline.Classify(err) != pipeline.ClassInfra {
		t.Fatalf("want an interruption classed infra, got %v (%s)", err, pipeline.Classify(err))
	}
	if v, ok := stagetest.Verdict(t, st, id, fs[0].ID, review.StageExpert); ok {
		t.Fatalf("a cancelled run stored a verdict: %+v", v)
	}
	if runs, _ := st.ListExpertRuns(context.Background(), id); len(runs) != 0 {
		t.Fatalf("a cancelled run stored a run record: %+v", runs)
	}
}
