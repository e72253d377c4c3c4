package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

// Without REDIS_URL, RunReview makes this process the review's fleet and
// runs that review only: a review someone else queued in the same
// database stays queued. The run's own harness settings reach its review;
// the app's configuration and pipeline are left as they were.
func TestRunReviewInProcessRunsOnlyItsReview(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := demo.NewServer() // the demo's rule-based model: it knows the sample's issues
	defer srv.Close()
	repo, err := demo.WriteRepo(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.DatabaseURL = testenv.IsolatedSchema(t)
	cfg.RedisURL = ""
	cfg.LLM.BaseURL, cfg.LLM.APIKey, cfg.LLM.Model = srv.URL, "test", demo.Model
	cfg.LLM.IntentModel, cfg.LLM.VerifyModel, cfg.LLM.ExpertModel, cfg.LLM.EvalModel = "", "", "", ""
	cfg.Worker.TaskCheckInterval = 20 * time.Millisecond
	cfg.Expert.SnapshotDir = t.TempDir()
	cfg.Harness.EvalEnabled = true
	a, err := Open(ctx, cfg, Options{Migrate: true, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if !a.LocalRedis {
		t.Fatal("no in-process Redis without REDIS_URL")
	}
	change := submit.Request{Origin: submit.FromOperator, Repo: repo.Dir, Base: repo.Base, Head: repo.Head}

	other, err := a.Prepare(ctx, change)
	if err != nil {
		t.Fatal(err)
	}
	otherID, err := a.Store.CreateReview(ctx, other)
	if err != nil {
		t.Fatal(err)
	}

	h := cfg.Harness
	h.EvalEnabled = false
	var progress strings.Builder
	out, err := a.RunReview(ctx, ReviewRequest{Change: change}, RunOptions{Harness: &h, Progress: &progress})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, progress.String())
	}
	if out.ID == "" || out.ID == otherID || out.Review.Status != review.ReviewDone || out.Interrupted {
		t.Fatalf("outcome %+v", out)
	}
	if !strings.Contains(progress.String(), "intent") {
		t.Errorf("no progress written: %q", progress.String())
	}
	if pipeline.Settings(out.Review).Harness.EvalEnabled {
		t.Error("the run's harness settings did not reach its review")
	}
	if !a.Cfg.Harness.EvalEnabled || a.Pipeline.AdmitOnly != "" {
		t.Errorf("the run changed the app: harness %+v, admit only %q", a.Cfg.Harness, a.Pipeline.AdmitOnly)
	}
	if _, err := a.Report(ctx, out.ID); err != nil {
		t.Errorf("report: %v", err)
	}
	got, err := a.Store.GetReview(ctx, otherID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != review.ReviewQueued {
		t.Errorf("the other review is %s: the in-process fleet ran a review it was not started for", got.Status)
	}
}
