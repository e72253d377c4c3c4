package e2e

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/progress"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// 429s with Retry-After are waited out without counting as failures: with
// one retry allowed per task, an item rate-limited twice still succeeds.
func TestRateLimitedTasksDoNotCountAsFailures(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	limited := func(ctx context.Context, req openaiRequest) llmfake.Reply {
		if llmfake.SchemaName(req) == "reviewfleet_intent" && n.Add(1) <= 6 {
			return llmfake.RateLimited(time.Second)
		}
		return demo.Handler(ctx, req)
	}
	f := newFleet(t, limited, nil)
	r := f.review(t, demoRepo(t))
	if r.Status != review.ReviewDone {
		t.Fatalf("status %s: %s", r.Status, r.Error)
	}
	ctx := context.Background()
	failed, _ := f.sub.Store.FailedItems(ctx, r.ID)
	if len(failed) != 0 {
		t.Fatalf("rate limits failed items: %+v", failed)
	}
	calls, _ := f.sub.Store.ListLLMCalls(ctx, r.ID)
	limitedCalls := 0
	for _, c := range calls {
		if c.Status == "rate_limited" {
			limitedCalls++
		}
	}
	if limitedCalls != 6 {
		t.Fatalf("%d rate-limited calls recorded, want 6", limitedCalls)
	}
}

// Replies that are not JSON at all get one repair attempt, then fail their
// item with the reason. When every intent item failed nothing was
// reviewed: the review fails, and its report says why.
func TestGarbageRepliesFailItemsAndNothingReviewedFailsTheReview(t *testing.T) {
	t.Parallel()
	garbage := func(context.Context, openaiRequest) llmfake.Reply {
		return llmfake.Text("Sure! Here are my thoughts: the code looks fine overall.")
	}
	f := newFleet(t, garbage, nil)
	r := f.review(t, demoRepo(t))
	if r.Status != review.ReviewFailed || !strings.Contains(r.Error, "no intent item could be reviewed: 3 of 3 failed") || r.FailedItems != 3 {
		t.Fatalf("status %s (%d failed items): %s", r.Status, r.FailedItems, r.Error)
	}
	ctx := context.Background()
	failed, _ := f.sub.Store.FailedItems(ctx, r.ID)
	if len(failed) != 3 || !strings.Contains(failed[0].Error, "invalid LLM reply") {
		t.Fatalf("failed items: %+v", failed)
	}
	calls, _ := f.sub.Store.ListLLMCalls(ctx, r.ID)
	if len(calls) != 6 {
		t.Errorf("%d calls, want 2 per intent item (the reply and one repair)", len(calls))
	}
	rep := failureReport(t, f.sub.Store, r.ID)
	var doc struct {
		FailedItems []struct {
			Stage string `json:"stage"`
			Error string `json:"error"`
		} `json:"failed_items"`
	}
	if err := json.Unmarshal(rep.JSON, &doc); err != nil || len(doc.FailedItems) != 3 {
		t.Fatalf("the report does not list the failed items: %v %s", err, rep.JSON)
	}
}

// A worker killed after writing its result but before moving the review
// on leaves a complete stage behind; the reconciler moves it on.
func TestReconcilerAdvancesAStageWhoseLastWorkerDied(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := openFleet(t, demo.Handler, nil)
	id, err := f.sub.Submit(ctx, demoRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	items, _ := f.sub.Store.ListItems(ctx, id, review.StageIntent)
	for _, it := range items {
		// What the handler's transaction commits before it dies.
		if err := f.sub.Store.FinishIntentItem(ctx, id, it.Key, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The stage started several round trips ago: longer than this grace.
	rec := f.sub.Reconciler()
	rec.StallGrace = time.Millisecond
	stats, err := rec.RunOnce(ctx)
	if err != nil || stats.Advanced != 1 {
		t.Fatalf("reconcile: %+v %v", stats, err)
	}
	f.startWorker(t)
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	r, err := progress.Wait(wctx, f.sub.Store, id, io.Discard, time.Minute)
	if err != nil || r.Status != review.ReviewDone {
		t.Fatalf("review: %s %v", r.Status, err)
	}
	if got, _ := f.sub.Store.ListItems(ctx, id, review.StageReport); len(got) != 1 || got[0].Status != review.ItemDone {
		t.Fatalf("report item: %+v", got)
	}
}

// An expert whose model keeps failing is retried; the last attempt stores
// the run with stop reason "error", lowers the finding to at most the
// verify floor (a failed check never leaves it as if unchecked)
// and fails the item. With every expert item failed, nothing was
// investigated: the review fails.
func TestFailingExpertRunsAreRecorded(t *testing.T) {
	t.Parallel()
	failing := func(ctx context.Context, req openaiRequest) llmfake.Reply {
		if len(req.Tools) > 0 {
			return llmfake.Fail(500, "expert model down")
		}
		return demo.Handler(ctx, req)
	}
	f := newFleet(t, failing, nil)
	r := f.review(t, demoRepo(t))
	if r.Status != review.ReviewFailed || !strings.Contains(r.Error, "no expert item could be reviewed: 4 of 4 failed") || !strings.Contains(r.Error, "500") {
		t.Fatalf("status %s: %s", r.Status, r.Error)
	}
	ctx := context.Background()
	runs, _ := f.sub.Store.ListExpertRuns(ctx, r.ID)
	if len(runs) != 4 {
		t.Fatalf("%d expert runs stored, want one per anchored finding (4)", len(runs))
	}
	for id, run := range runs {
		if run.StopReason != "error" || !strings.Contains(run.Error, "500") {
			t.Errorf("finding %d: stop reason %q, error %q", id, run.StopReason, run.Error)
		}
		if string(run.Phases) != "[]" {
			t.Errorf("phases stored as %s, want []", run.Phases)
		}
	}
	byStage := verdictsByStage(t, f.sub.Store, r.ID)
	for _, v := range byStage[review.StageExpert] {
		if v.Verdict != review.VerdictFailed || v.ConfidenceAfter > min(v.ConfidenceBefore, 0.3) {
			t.Errorf("expert verdict after a failing model: %+v", v)
		}
	}
	if n := len(byStage[review.StageEval]); n != 0 {
		t.Errorf("eval cross-examined %d findings no expert investigated", n)
	}
}
