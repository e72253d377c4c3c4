package e2e

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/progress"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// A provider that refuses every call (401) fails the review at once —
// nothing was reviewed — and the report says why.
func TestProviderRefusingEveryCallFailsTheReview(t *testing.T) {
	t.Parallel()
	refuse := func(context.Context, openaiRequest) llmfake.Reply {
		return llmfake.Fail(401, "Incorrect API key provided")
	}
	f := newFleet(t, refuse, func(c *config.Config) { c.Worker.MaxRetry = 4 })
	r := f.review(t, demoRepo(t))
	if r.Status != review.ReviewFailed || !strings.Contains(r.Error, "no intent item could be reviewed") || !strings.Contains(r.Error, "401") {
		t.Fatalf("status %s: %s", r.Status, r.Error)
	}
	ctx := context.Background()
	calls, _ := f.sub.Store.ListLLMCalls(ctx, r.ID)
	if len(calls) != 3 {
		t.Errorf("%d calls for 3 intent items: a permanent error must not be retried", len(calls))
	}
	rep := failureReport(t, f.sub.Store, r.ID)
	if !strings.Contains(rep.Markdown, "> **FAILED:** no intent item could be reviewed") {
		t.Errorf("the report does not open with the failure:\n%s", rep.Markdown)
	}
}

// One intent item in three gets replies that never parse: the review ends
// done but incomplete, and every format says so first.
func TestGarbageForOneFileMakesTheReviewIncomplete(t *testing.T) {
	t.Parallel()
	h := func(ctx context.Context, req openaiRequest) llmfake.Reply {
		if llmfake.SchemaName(req) == "reviewfleet_intent" && mentions(req, "### File: api/auth.go") {
			return llmfake.Text("I think it is fine, no JSON from me.")
		}
		return demo.Handler(ctx, req)
	}
	f := newFleet(t, h, nil)
	r := f.review(t, demoRepo(t))
	if r.Status != review.ReviewDone || !r.Incomplete || r.FailedItems != 1 {
		t.Fatalf("status %s incomplete %v failed %d: %s", r.Status, r.Incomplete, r.FailedItems, r.Error)
	}
	rep, err := f.sub.Store.GetReport(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(rep.Markdown, "- **Status:**")
	if !strings.Contains(head, "**INCOMPLETE:** 1 item could not be reviewed") || !strings.Contains(head, "invalid LLM reply") {
		t.Errorf("the Markdown report does not open with the failed item:\n%s", rep.Markdown)
	}
	var doc struct {
		Status      string `json:"status"`
		Incomplete  bool   `json:"incomplete"`
		FailedCount int    `json:"failed_item_count"`
		FailedItems []struct {
			Stage string `json:"stage"`
			Error string `json:"error"`
		} `json:"failed_items"`
	}
	if err := json.Unmarshal(rep.JSON, &doc); err != nil || doc.Status != "done" || !doc.Incomplete || doc.FailedCount != 1 ||
		len(doc.FailedItems) != 1 || doc.FailedItems[0].Stage != "intent" || !strings.Contains(doc.FailedItems[0].Error, "invalid LLM reply") {
		t.Errorf("JSON report: %v %+v", err, doc)
	}
	var sarif struct {
		Runs []struct {
			Invocations []struct {
				ExecutionSuccessful bool `json:"executionSuccessful"`
				Notifications       []struct {
					Level   string `json:"level"`
					Message struct {
						Text string `json:"text"`
					} `json:"message"`
				} `json:"toolExecutionNotifications"`
			} `json:"invocations"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(rep.SARIF, &sarif); err != nil || len(sarif.Runs) != 1 || len(sarif.Runs[0].Invocations) != 1 {
		t.Fatalf("SARIF: %v %s", err, rep.SARIF)
	}
	inv := sarif.Runs[0].Invocations[0]
	if inv.ExecutionSuccessful || len(inv.Notifications) != 1 || !strings.Contains(inv.Notifications[0].Message.Text, "invalid LLM reply") {
		t.Errorf("SARIF invocation: %+v", inv)
	}
}

// A worker stopped (SIGTERM) while its tasks wait on the model, on their
// last attempt: the items are not failed, use no attempt, and another
// worker finishes the review.
func TestShutdownOnTheLastAttemptGivesWorkBack(t *testing.T) {
	t.Parallel()
	var hold atomic.Bool
	hold.Store(true)
	arrived := make(chan struct{}, 16)
	h := func(ctx context.Context, req openaiRequest) llmfake.Reply {
		if hold.Load() && llmfake.SchemaName(req) == "reviewfleet_intent" {
			arrived <- struct{}{}
			<-ctx.Done() // the model never answers before the worker stops
			return llmfake.Fail(500, "gone")
		}
		return demo.Handler(ctx, req)
	}
	f := openFleet(t, h, func(c *config.Config) {
		c.Worker.MaxRetry = 0 // every attempt is the last
		c.Worker.ShutdownTimeout = 500 * time.Millisecond
	})
	f.startWorker(t)
	ctx := context.Background()
	id, err := f.sub.Submit(ctx, demoRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(time.Minute):
		t.Fatal("no intent call reached the model")
	}
	f.stop() // returns once every handler has returned
	hold.Store(false)
	items, err := f.sub.Store.ListItems(ctx, id, review.StageIntent)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Status != review.ItemPending && it.Status != review.ItemDone {
			t.Fatalf("item %s is %s after a shutdown: %s", it.Key, it.Status, it.Error)
		}
		if it.Status == review.ItemPending && it.Attempts != 0 {
			t.Errorf("item %s used %d attempts on an interrupted run", it.Key, it.Attempts)
		}
	}
	if r, _ := f.sub.Store.GetReview(ctx, id); r.Status != review.ReviewRunning {
		t.Fatalf("review %s after the shutdown: %s", r.Status, r.Error)
	}
	// Run returned only after its handlers did: they completed their
	// call records while the pool was still open.
	calls, _ := f.sub.Store.ListLLMCalls(ctx, id)
	if len(calls) == 0 {
		t.Fatal("no call recorded")
	}
	for _, c := range calls {
		if c.Status == store.LLMCallStarted {
			t.Errorf("call %d left started by a clean shutdown", c.ID)
		}
	}
	// The interrupted tasks went back to their queue (or, failing that, the
	// reconciler puts them back): a new worker finishes the review.
	f.startWorker(t)
	rec := f.sub.Reconciler()
	rec.Only, rec.RequeueAfter = id, 0
	rctx, stopRec := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = rec.Run(rctx, time.Second) }()
	defer func() { stopRec(); wg.Wait() }()
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	r, err := progress.Wait(wctx, f.sub.Store, id, io.Discard, 2*time.Minute)
	if err != nil || r.Status != review.ReviewDone || r.FailedItems != 0 {
		t.Fatalf("review after restart: %s (%d failed) %v %s", r.Status, r.FailedItems, err, r.Error)
	}
}

// Each call is in llm_calls as "started" while the model is still
// thinking, and completed once it answers.
func TestLLMCallIsRecordedBeforeTheReply(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	h := func(ctx context.Context, req openaiRequest) llmfake.Reply {
		first := false
		once.Do(func() { first = true })
		if first {
			close(arrived)
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return demo.Handler(ctx, req)
	}
	f := newFleet(t, h, nil)
	ctx := context.Background()
	id, err := f.sub.Submit(ctx, demoRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(time.Minute):
		t.Fatal("no call reached the model")
	}
	calls, err := f.sub.Store.ListLLMCalls(ctx, id)
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	started := 0
	for _, c := range calls {
		if c.Status == store.LLMCallStarted {
			started++
			if c.StartedAt.IsZero() || c.PromptHash == "" {
				t.Errorf("started row without its start time or prompt hash: %+v", c)
			}
		}
	}
	if started == 0 {
		t.Fatalf("no started row while the model was answering: %+v", calls)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	r, err := progress.Wait(wctx, f.sub.Store, id, io.Discard, 2*time.Minute)
	if err != nil || r.Status != review.ReviewDone {
		t.Fatalf("review: %s %v", r.Status, err)
	}
	calls, _ = f.sub.Store.ListLLMCalls(ctx, id)
	for _, c := range calls {
		if c.Status == store.LLMCallStarted {
			t.Errorf("call %d still started after the review ended", c.ID)
		}
	}
}

// mentions reports whether any message of req (the repair request included)
// contains s.
func mentions(req openaiRequest, s string) bool {
	for _, m := range req.Messages {
		if strings.Contains(m.Content, s) {
			return true
		}
	}
	return false
}

// A task asynq archived while its item is still pending (a lease lost on
// the last attempt) is not the item's fault: the reconciler runs it again
// instead of failing the item.
func TestArchivedTaskOfAPendingItemRunsAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := openFleet(t, demo.Handler, func(c *config.Config) { c.Scheduler.RequeueAfter = 0 })
	id, err := f.sub.Submit(ctx, demoRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	items, err := f.sub.Store.ListItems(ctx, id, review.StageIntent)
	if err != nil || len(items) == 0 {
		t.Fatalf("items: %v %v", items, err)
	}
	queue, task := pipeline.Queue(review.StageIntent), pipeline.TaskID(id, review.StageIntent, items[0].Key)
	if err := f.sub.Inspector.ArchiveTask(queue, task); err != nil {
		t.Fatal(err)
	}
	stats, err := f.sub.Reconciler().RunOnce(ctx)
	if err != nil || stats.Archived != 1 {
		t.Fatalf("reconcile: %+v %v", stats, err)
	}
	it, _ := f.sub.Store.GetItem(ctx, id, review.StageIntent, items[0].Key)
	if it.Status != review.ItemPending || it.Generation != 1 {
		t.Fatalf("item after reconcile: %+v", it)
	}
	// The item runs again under a new task generation (a new task ID).
	task = pipeline.GenTaskID(id, review.StageIntent, items[0].Key, it.Generation)
	if info, err := f.sub.Inspector.GetTaskInfo(queue, task); err != nil || info.State.String() != "pending" {
		t.Fatalf("task after reconcile: %+v %v", info, err)
	}
	f.startWorker(t)
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	r, err := progress.Wait(wctx, f.sub.Store, id, io.Discard, 2*time.Minute)
	if err != nil || r.Status != review.ReviewDone || r.FailedItems != 0 {
		t.Fatalf("review: %s (%d failed) %v", r.Status, r.FailedItems, err)
	}
}

// failureReport waits for the report the pipeline stores just after it
// fails a review (progress.Wait may see the failure first).
func failureReport(t *testing.T, st *store.Store, id string) store.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		rep, err := st.GetReport(ctx, id)
		if err == nil {
			return rep
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no failure report for %s: %v", id, err)
		case <-tick.C:
		}
	}
}
