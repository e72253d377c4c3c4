package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/reviewfleet/reviewfleet/store"
)

func TestEvalRunRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	reviewID := newReview(t, st)
	run := store.EvalRun{
		ID: uuid.NewString(), Dataset: "testdata/eval", Label: "verify off", JudgeModel: "judge-1", Window: 3,
		Harness: json.RawMessage(`{"verify": false}`), Cases: 2, Golden: 5, TP: 3, FP: 1, FN: 2,
		Precision: 0.75, Recall: 0.6, F1: 2.0 / 3, Runtime: 1500 * time.Millisecond, LLMCalls: 12, TokensIn: 900,
		TokensOut: 100, Cost: 0.25, JudgeCalls: 1, JudgeCost: 0.01,
		Results: []store.EvalResult{
			{Case: "b", ReviewID: reviewID, Golden: 3, TP: 2, FP: 1, FN: 1, Runtime: time.Second, LLMCalls: 7, Detail: json.RawMessage(`{"x": 1}`)},
			{Case: "a", Golden: 2, TP: 1, FN: 1, Error: "could not clone"},
		},
	}
	if err := st.SaveEvalRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	got, err := st.GetEvalRun(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.TP != 3 || got.FP != 1 || got.FN != 2 || got.Runtime != run.Runtime || got.Label != "verify off" ||
		got.JudgeCalls != 1 || len(got.Results) != 2 {
		t.Fatalf("run %+v", got)
	}
	if a, b := got.Results[0], got.Results[1]; a.Case != "a" || a.ReviewID != "" || a.Error != "could not clone" ||
		b.ReviewID != reviewID || b.Runtime != time.Second || string(b.Detail) != `{"x": 1}` {
		t.Fatalf("results %+v", got.Results)
	}
	if err := st.SaveEvalRun(ctx, run); err == nil {
		t.Fatal("storing the same run twice must fail")
	}
	if _, err := st.GetEvalRun(ctx, uuid.NewString()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown run: %v", err)
	}
	if _, err := st.GetEvalRun(ctx, "not-a-uuid"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("malformed run id: %v", err)
	}
}
