package e2e

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/progress"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// Redis loses every queued task (restart without persistence, FLUSHDB):
// the reconciler finds the ledger's pending items no queue holds, enqueues
// them again, and the review completes.
func TestReconcilerRecoversFromLostQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := openFleet(t, demo.Handler, func(c *config.Config) { c.Scheduler.RequeueAfter = 0 })
	id, err := f.sub.Submit(ctx, demoRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	opt, err := redis.ParseURL(f.cfg.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	stats, err := f.sub.Reconciler().RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Requeued != 3 {
		t.Fatalf("requeued %d items, want the 3 intent items", stats.Requeued)
	}
	f.startWorker(t)
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	r, err := progress.Wait(wctx, f.sub.Store, id, io.Discard, time.Minute)
	if err != nil || r.Status != review.ReviewDone {
		t.Fatalf("review after recovery: %s %s %v", r.Status, r.Error, err)
	}
	// A second pass finds nothing to do.
	if stats, err := f.sub.Reconciler().RunOnce(ctx); err != nil || stats.Requeued != 0 {
		t.Fatalf("second pass: %+v %v", stats, err)
	}
}

// A review that cannot finish (no worker ever runs) fails at its deadline
// with a reason, and its report says why.
func TestOverdueReviewFailsWithReason(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := openFleet(t, demo.Handler, func(c *config.Config) { c.Scheduler.ReviewTimeout = time.Millisecond })
	id, err := f.sub.Submit(ctx, demoRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	stats, err := f.sub.Reconciler().RunOnce(ctx)
	if err != nil || stats.Expired != 1 {
		t.Fatalf("expired %+v %v", stats, err)
	}
	r, _ := f.sub.Store.GetReview(ctx, id)
	if r.Status != review.ReviewFailed || !strings.Contains(r.Error, "deadline") || !strings.Contains(r.Error, "intent") {
		t.Fatalf("review: %s %q", r.Status, r.Error)
	}
	rep, err := f.sub.Store.GetReport(ctx, id)
	if err != nil || !strings.Contains(rep.Markdown, "deadline") {
		t.Fatalf("failure report: %v\n%s", err, rep.Markdown)
	}
}
