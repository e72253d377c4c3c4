package e2e

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/progress"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// BenchmarkDemoReview measures one whole review of the sample repository —
// 3 files, 5 candidate findings, 18 LLM calls answered at once by the
// recorded exchange — through real Postgres, Redis and a worker: the
// pipeline's own cost (queue hops, ledger writes, rendering), no model time.
func BenchmarkDemoReview(b *testing.B) {
	progress.PollInterval = 5 * time.Millisecond // benchmarks run after the tests: no race
	f := newFleet(b, demo.Handler, nil)
	req := demoRepo(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id, err := f.sub.Submit(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		r, err := progress.Wait(ctx, f.sub.Store, id, io.Discard, time.Minute)
		if err != nil || r.Status != review.ReviewDone {
			b.Fatalf("%s %v", r.Status, err)
		}
	}
}

// BenchmarkDemoReviewDefaultPoll is the same review with asynq's default
// TaskCheckInterval of 1s, to show what the tuned interval saves per hop.
func BenchmarkDemoReviewDefaultPoll(b *testing.B) {
	progress.PollInterval = 5 * time.Millisecond
	f := newFleet(b, demo.Handler, func(c *config.Config) { c.Worker.TaskCheckInterval = time.Second })
	req := demoRepo(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id, err := f.sub.Submit(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if r, err := progress.Wait(ctx, f.sub.Store, id, io.Discard, time.Minute); err != nil || r.Status != review.ReviewDone {
			b.Fatalf("%s %v", r.Status, err)
		}
	}
}
