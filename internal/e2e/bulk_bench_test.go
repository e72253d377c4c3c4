package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/bulk"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/githubfake"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/progress"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// BenchmarkBulkBatch runs one batch of reviews of the sample change (3
// files, 18 model calls each) through several workers (separate asynq
// servers with their own connection pools, in this process) against a
// fake model that takes 200 ms per call, and submits one interactive
// review when half the batch has ended. It reports reviews per minute,
// p50/p95 time queued and running, the share of the fleet's request quota
// used, and the interactive review's wall time.
//
// Size: REVIEWFLEET_BENCH_BULK_REVIEWS (default 1000),
// REVIEWFLEET_BENCH_BULK_WORKERS (default 4), REVIEWFLEET_BENCH_BULK_RPM
// (the fleet's requests-per-minute quota, default 6000).
func BenchmarkBulkBatch(b *testing.B) {
	n := envInt("REVIEWFLEET_BENCH_BULK_REVIEWS", 1000)
	workers := envInt("REVIEWFLEET_BENCH_BULK_WORKERS", 4)
	rpm := envInt("REVIEWFLEET_BENCH_BULK_RPM", 6000)
	for i := 0; i < b.N; i++ {
		runBulkBench(b, n, workers, rpm)
	}
}

func runBulkBench(b *testing.B, n, workers, rpm int) {
	ctx := context.Background()
	srv := llmfake.New(func(ctx context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
		}
		return demo.Handler(ctx, req)
	})
	defer srv.Close()
	cfg := config.Default()
	cfg.DatabaseURL = testenv.IsolatedSchema(b)
	cfg.RedisURL = testenv.RedisURL(b)
	cfg.LLM.BaseURL, cfg.LLM.APIKey = srv.URL, "bench"
	cfg.LLM.FleetRequestsPerMinute = rpm
	cfg.Worker.HealthAddr = ""
	cfg.Worker.TaskCheckInterval = 20 * time.Millisecond
	cfg.Expert.SnapshotDir = b.TempDir()
	cfg.Snapshot.AllowLoopbackHTTP = true
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sub, err := app.Open(ctx, cfg, app.Options{Migrate: true, Log: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Close()
	// Bulk entries name remote repositories only: these are served over
	// http on the loopback interface.
	gh := githubfake.New()
	defer gh.Close()
	var entries []bulk.Entry
	for i := range n + 1 {
		r, err := demo.WriteRepo(ctx, b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		u, err := gh.ServePublicGit("acme", fmt.Sprint("r", i), filepath.Join(r.Dir, ".git"))
		if err != nil {
			b.Skip(err)
		}
		entries = append(entries, bulk.Entry{Line: i + 1, Repo: u, Base: r.Base, Head: r.Head})
	}
	interactive := entries[n]
	entries = entries[:n]

	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	for i := range workers {
		wa, err := app.Open(ctx, cfg, app.Options{Log: quiet})
		if err != nil {
			b.Fatal(err)
		}
		defer wa.Close()
		w, err := wa.NewWorker(cfg.Worker)
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = w.Run(wctx) }()
		if i == 0 { // one scheduler's reconciler (and admission pass) for the fleet
			rec := wa.Reconciler()
			wg.Add(1)
			go func() { defer wg.Done(); _ = rec.Run(wctx, time.Second) }()
		}
	}

	b.ResetTimer()
	start := time.Now()
	sub2 := &bulk.Submitter{Store: sub.Store, Reviews: sub, Concurrency: cfg.Bulk.SubmitConcurrency}
	res, err := sub2.Submit(ctx, bulk.Spec{Name: "bench", Source: "bench", Entries: entries})
	if err != nil {
		b.Fatal(err)
	}
	submitted := time.Since(start)
	// The interactive review arrives when half the batch has ended.
	for {
		p, err := sub.Store.GetBatchProgress(ctx, res.Batch.ID)
		if err != nil {
			b.Fatal(err)
		}
		if p.Done+p.Failed >= n/2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	iStart := time.Now()
	iid, err := sub.Submit(ctx, submitReq(interactive))
	if err != nil {
		b.Fatal(err)
	}
	ir, err := progress.Wait(ctx, sub.Store, iid, io.Discard, time.Hour)
	if err != nil || ir.Status != review.ReviewDone {
		b.Fatalf("interactive review: %s %v", ir.Status, err)
	}
	iWall := time.Since(iStart)
	p, err := bulk.Wait(ctx, sub.Store, res.Batch.ID, io.Discard, progress.FleetWaits{})
	if err != nil {
		b.Fatal(err)
	}
	wall := time.Since(start)
	b.StopTimer()

	timings, err := sub.Store.BatchTimings(ctx, res.Batch.ID)
	if err != nil {
		b.Fatal(err)
	}
	var queued, running []time.Duration
	for _, t := range timings {
		queued, running = append(queued, t.Queued), append(running, t.Running)
	}
	minutes := wall.Minutes()
	b.ReportMetric(float64(p.Done)/minutes, "reviews/min")
	b.ReportMetric(pct(queued, 50).Seconds(), "queued-p50-s")
	b.ReportMetric(pct(queued, 95).Seconds(), "queued-p95-s")
	b.ReportMetric(pct(running, 50).Seconds(), "running-p50-s")
	b.ReportMetric(pct(running, 95).Seconds(), "running-p95-s")
	b.ReportMetric(float64(p.LLMCalls)/minutes/float64(rpm)*100, "quota-%")
	b.ReportMetric(iWall.Seconds(), "interactive-s")
	fmt.Fprintf(os.Stderr, "bulk bench: %d reviews (%d done, %d failed), %d workers, submitted in %s, wall %s, %d calls, interactive %s\n",
		n, p.Done, p.Failed, workers, submitted.Round(time.Millisecond), wall.Round(time.Millisecond), p.LLMCalls, iWall.Round(time.Millisecond))
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func submitReq(e bulk.Entry) submit.Request {
	return submit.Request{Origin: submit.FromOperator, Repo: e.Repo, Base: e.Base, Head: e.Head}
}
