package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/progress"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

// A submitter holds only DATABASE_URL and REDIS_URL: `review --no-wait`
// submits without a model endpoint, and a worker that has one reviews it.
func TestSubmitterNeedsNoModelEndpoint(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := demo.NewServer()
	t.Cleanup(srv.Close)
	submitter := testEnv{
		"DATABASE_URL": testenv.IsolatedSchema(t), "REDIS_URL": testenv.RedisURL(t),
		"REVIEWFLEET_EXPERT_SNAPSHOT_DIR": t.TempDir(), "REVIEWFLEET_WORKER_HEALTH_ADDR": "",
	}
	if _, stderr, err := runEnv(t, submitter, "migrate"); err != nil {
		t.Fatalf("migrate: %v\n%s", err, stderr)
	}
	r, err := demo.WriteRepo(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runEnv(t, submitter, "review", "--repo", r.Dir, "--base", r.Base, "--head", r.Head, "--no-wait")
	if err != nil {
		t.Fatalf("review --no-wait without a model endpoint: %v\n%s", err, stderr)
	}
	if strings.Contains(stderr, "OPENAI") || strings.Contains(stderr, "in-process") {
		t.Errorf("the submitter was told about a model endpoint or an in-process fleet:\n%s", stderr)
	}
	id := strings.TrimSpace(out)

	worker := testEnv{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "test"}
	for k, v := range submitter {
		worker[k] = v
	}
	cfg, err := config.LoadEnv("", worker.lookup)
	if err != nil {
		t.Fatal(err)
	}
	wa, err := app.Open(ctx, cfg, app.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer wa.Close()
	w, err := wa.NewWorker(cfg.Worker)
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(wctx) }()
	defer func() { stop(); <-done }()
	got, err := progress.Wait(ctx, wa.Store, id, io.Discard, time.Minute)
	if err != nil || got.Status != review.ReviewDone {
		t.Fatalf("the fleet did not review the submitted change: %s %q %v", got.Status, got.Error, err)
	}
}

// --no-wait without a fleet says so, and only so: no notice about an
// in-process fleet or a local Postgres comes first.
func TestNoWaitWithoutAFleetSaysOneThing(t *testing.T) {
	t.Parallel()
	env := testEnv{"XDG_DATA_HOME": t.TempDir()}
	r, err := demo.WriteRepo(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"review", "--repo", r.Dir, "--base", r.Base, "--head", r.Head, "--no-wait"},
		{"bulk", "--manifest", writeManifest(t, []string{`{"repo": "https://git.example/a.git", "base": "main", "head": "x"}`}), "--no-wait"},
	} {
		_, stderr, err := runEnv(t, env, args...)
		if err == nil || !strings.Contains(err.Error(), "needs a fleet") {
			t.Errorf("%s --no-wait without REDIS_URL: %v, want: it needs a fleet", args[0], err)
		}
		if stderr != "" {
			t.Errorf("%s --no-wait without REDIS_URL wrote more than its error:\n%s", args[0], stderr)
		}
	}
}

// A worker or a scheduler without REDIS_URL says so before anything local
// (a Postgres cluster, an in-process Redis) is started.
func TestFleetProcessesWithoutRedisStartNothing(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	env := testEnv{"XDG_DATA_HOME": data, "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}
	for _, cmd := range []string{"worker", "scheduler"} {
		_, stderr, err := runEnv(t, env, cmd)
		if err == nil || !strings.Contains(err.Error(), "needs REDIS_URL") || stderr != "" {
			t.Errorf("%s without REDIS_URL: %v\n%s", cmd, err, stderr)
		}
	}
	if entries, err := os.ReadDir(data); err != nil || len(entries) != 0 {
		t.Errorf("something was created for a local Postgres: %v %v", entries, err)
	}
}
