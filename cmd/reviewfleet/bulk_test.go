package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
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
	"github.com/reviewfleet/reviewfleet/store"
)

// writeManifest writes one manifest line per entry (raw lines as given).
func writeManifest(t *testing.T, lines []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "batch.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func manifestLine(t *testing.T, e bulk.Entry) string {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A manifest of a dozen entries (one a duplicate) through two workers
// with a short review timeout: every distinct
// review ends done, the batch row and `batch status` agree, an
// interactive review submitted mid-batch ends before the batch, running
// reviews never exceed the capacity, and re-running the command submits
// nothing again. A malformed line is reported first and nothing submitted.
func TestBulkManifestThroughTwoWorkers(t *testing.T) {
	t.Parallel()
	env := testEnv{}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// Each model call takes a little while, so that the batch takes about
	// as long as the review timeout: counted from submission, as it was,
	// the last reviews would time out in the queue.
	var calls atomic.Int64
	srv := llmfake.New(func(ctx context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		calls.Add(1)
		select {
		case <-time.After(80 * time.Millisecond):
		case <-ctx.Done():
		}
		return demo.Handler(ctx, req)
	})
	t.Cleanup(srv.Close)
	for k, v := range map[string]string{
		"DATABASE_URL": testenv.IsolatedSchema(t), "REDIS_URL": testenv.RedisURL(t),
		"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "test",
		"REVIEWFLEET_LLM_MAX_ATTEMPTS": "1", "REVIEWFLEET_WORKER_HEALTH_ADDR": "",
		"REVIEWFLEET_WORKER_TASK_CHECK_INTERVAL": "20ms", "REVIEWFLEET_WORKER_CONCURRENCY": "4",
		"REVIEWFLEET_EXPERT_SNAPSHOT_DIR":       t.TempDir(),
		"REVIEWFLEET_SCHEDULER_REVIEW_TIMEOUT":  "10s",
		"REVIEWFLEET_EXPERT_RUN_TIMEOUT":        "8s",
		"REVIEWFLEET_FLEET_MAX_RUNNING_REVIEWS": "3",
	} {
		env[k] = v
	}
	if _, _, err := runEnv(t, env, "migrate"); err != nil {
		t.Fatal(err)
	}

	var lines []string
	var repos []demo.Repo
	for range 12 {
		r, err := demo.WriteRepo(ctx, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		repos = append(repos, r)
	}
	// A manifest names remote repositories only: these are served over
	// http on the loopback interface, which the configuration allows.
	gh := githubfake.New()
	defer gh.Close()
	env["REVIEWFLEET_SNAPSHOT_ALLOW_LOOPBACK_HTTP"] = "true"
	for i := range 11 {
		u, err := gh.ServePublicGit("acme", fmt.Sprint("r", i), filepath.Join(repos[i].Dir, ".git"))
		if err != nil {
			t.Skip(err)
		}
		lines = append(lines, manifestLine(t, bulk.Entry{Repo: u, Base: repos[i].Base, Head: repos[i].Head,
			Labels: map[string]string{"n": fmt.Sprint(i)}}))
	}
	lines = append(lines, lines[3]) // line 12: the same change as line 4

	bad := append(append([]string{}, lines[:5]...), `{"repo": "https://git.example/x.git", "base": "main"}`)
	bad = append(bad, manifestLine(t, bulk.Entry{Repo: repos[0].Dir, Base: repos[0].Base, Head: repos[0].Head}))
	bad = append(bad, lines[5:]...)
	_, _, err := runEnv(t, env, "bulk", "--manifest", writeManifest(t, bad), "--no-wait")
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), "line 6: missing head") ||
		!strings.Contains(err.Error(), "line 7: repo: a local path is not accepted from a manifest") {
		t.Fatalf("malformed manifest: %v", err)
	}
	if out, _, err := runEnv(t, env, "batch", "list"); err != nil || strings.Count(out, "\n") != 1 {
		t.Fatalf("a malformed manifest submitted something: %v\n%s", err, out)
	}

	cfg, err := config.LoadEnv("", env.lookup)
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sub, err := app.Open(ctx, cfg, app.Options{Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var wg sync.WaitGroup
	wctx, stopWorkers := context.WithCancel(context.Background())
	defer func() { stopWorkers(); wg.Wait() }()
	for range 2 {
		wa, err := app.Open(ctx, cfg, app.Options{Log: quiet})
		if err != nil {
			t.Fatal(err)
		}
		defer wa.Close()
		w, err := wa.NewWorker(cfg.Worker)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = w.Run(wctx) }()
	}
	// Sample the running reviews throughout.
	var maxRunning atomic.Int64
	sampleCtx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for sampleCtx.Err() == nil {
			if n, err := sub.Store.RunningReviews(sampleCtx); err == nil && int64(n) > maxRunning.Load() {
				maxRunning.Store(int64(n))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()

	manifest := writeManifest(t, lines)
	// The submitting side has no model endpoint: only the workers call
	// the model.
	submitter := maps.Clone(env)
	delete(submitter, "OPENAI_BASE_URL")
	delete(submitter, "OPENAI_API_KEY")
	out, stderr, err := runEnv(t, submitter, "bulk", "--manifest", manifest, "--no-wait", "--max-running", "2", "--label", "team=core")
	if err != nil {
		t.Fatalf("bulk: %v\n%s", err, stderr)
	}
	batchID := strings.TrimSpace(out)
	if !strings.Contains(stderr, "12 entries: 11 new reviews, 1 linked to identical reviews, 0 could not be submitted\n") {
		t.Fatalf("submission summary: %s", stderr)
	}

	// An interactive review submitted while the batch runs.
	iid, err := sub.Submit(ctx, submit.Request{Origin: submit.FromOperator, Repo: repos[11].Dir, Base: repos[11].Base, Head: repos[11].Head})
	if err != nil {
		t.Fatal(err)
	}
	ir, err := progress.Wait(ctx, sub.Store, iid, io.Discard, time.Minute)
	if err != nil || ir.Status != review.ReviewDone {
		t.Fatalf("interactive review: %s %q %v", ir.Status, ir.Error, err)
	}
	p, err := bulk.Wait(ctx, sub.Store, batchID, io.Discard, progress.FleetWaits{})
	if err != nil {
		t.Fatal(err)
	}
	stopSampling()
	<-sampled
	if p.Reviews != 11 || p.Done != 11 || p.Failed != 0 {
		t.Fatalf("batch progress %+v: want 11 distinct reviews, all done", p)
	}
	t.Logf("batch ran %s (first start to last end), %d model calls, at most %d reviews at once",
		p.LastFinished.Sub(*p.FirstStarted).Round(time.Millisecond), calls.Load(), maxRunning.Load())
	if m := maxRunning.Load(); m > 3 {
		t.Errorf("%d reviews ran at once, capacity 3", m)
	}
	if p.LastFinished == nil || !ir.FinishedAt.Before(*p.LastFinished) {
		t.Errorf("the interactive review ended at %v, after the batch's last review (%v)", ir.FinishedAt, p.LastFinished)
	}

	b, err := sub.Store.GetBatch(ctx, batchID)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != store.BatchSubmitted || b.Entries != 12 || b.Submitted != 12 || b.Duplicates != 1 || b.SubmitErrors != 0 ||
		b.MaxRunning != 2 || b.Labels["team"] != "core" {
		t.Fatalf("batch row %+v", b)
	}
	entries, err := sub.Store.BatchEntries(ctx, batchID)
	if err != nil || len(entries) != 12 || !entries[11].Duplicate || entries[11].ReviewID != entries[3].ReviewID {
		t.Fatalf("entries: %+v %v", entries, err)
	}
	status, _, err := runEnv(t, env, "batch", "status", batchID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"status    ended",
		"entries   12: 11 new reviews, 1 linked to identical reviews, 0 could not be submitted\n",
		"reviews   11 (a review linked entries share counts once): 11 done, 0 failed, 0 running, 0 queued",
		fmt.Sprintf("llm       %d calls", p.LLMCalls),
	} {
		if !strings.Contains(status, want) {
			t.Errorf("batch status lacks %q:\n%s", want, status)
		}
	}
	checkBatchViews(t, env, batchID, entries)
	report, _, err := runEnv(t, env, "batch", "report", batchID)
	// A Markdown table: its header, its separator and a row per repository.
	if err != nil || strings.Count(report, "\n| ") != 13 || !strings.Contains(report, "## Cost") {
		t.Errorf("batch report (%v):\n%s", err, report)
	}

	// Re-running the same command is a resumption: nothing new.
	_, stderr, err = runEnv(t, env, "bulk", "--manifest", manifest, "--no-wait")
	if err != nil || !strings.Contains(stderr, "12 entries: 11 new reviews, 1 linked to identical reviews, 0 could not be submitted (12 of them submitted by an earlier run)") {
		t.Fatalf("re-run: %v\n%s", err, stderr)
	}
	// A new batch of the same changes links the done reviews.
	lines[0] = strings.Replace(lines[0], `"n":"0"`, `"n":"again"`, 1)
	_, stderr, err = runEnv(t, env, "bulk", "--manifest", writeManifest(t, lines[:2]), "--no-wait")
	if err != nil || !strings.Contains(stderr, "2 entries: 0 new reviews, 2 linked to identical reviews") {
		t.Fatalf("second batch of done changes: %v\n%s", err, stderr)
	}
}

// checkBatchViews checks that `batch status` in every format and `status
// --batch` list each entry of a finished batch with its review, the linked
// entry naming the line whose review it shares.
func checkBatchViews(t *testing.T, env testEnv, batchID string, entries []store.BatchEntry) {
	t.Helper()
	out, _, err := runEnv(t, env, "batch", "status", batchID, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var v batchView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("batch status --format json: %v\n%s", err, out)
	}
	if v.Entries.Total != 12 || v.Entries.NewReviews != 11 || v.Entries.Linked != 1 || !v.Entries.AllSubmitted ||
		v.Progress.Done != 11 || len(v.Items) != 12 {
		t.Fatalf("batch status json: %+v", v)
	}
	for i, e := range v.Items {
		want := entries[i]
		if e.Line != want.Line || e.ReviewID != want.ReviewID || e.Repo != want.Repo || e.Base != want.BaseRef ||
			e.Head != want.HeadRef || e.Status != "done" || e.Labels["n"] != want.Labels["n"] || e.Labels["n"] == "" {
			t.Errorf("entry %d: %+v, want %+v done", i, e, want)
		}
	}
	if dup := v.Items[11]; dup.DuplicateOf != entries[3].ReviewID || dup.DuplicateOfLine != entries[3].Line {
		t.Errorf("linked entry %+v, want the review and line of %+v", dup, entries[3])
	}
	out, _, err = runEnv(t, env, "batch", "status", batchID, "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 13 || recs[0][0] != "line" || recs[12][5] != entries[11].ReviewID ||
		recs[12][13] != fmt.Sprint(entries[3].Line) {
		t.Errorf("batch status --format csv (%v):\n%s", err, out)
	}
	out, _, err = runEnv(t, env, "status", "--batch", batchID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.Contains(out, e.ReviewID) {
			t.Errorf("status --batch lacks the review %s of line %d:\n%s", e.ReviewID, e.Line, out)
		}
	}
	if !strings.Contains(out, fmt.Sprintf("line %d", entries[3].Line)) {
		t.Errorf("status --batch does not name the line the linked entry shares:\n%s", out)
	}
}

// bulk without REDIS_URL runs a fleet in the command; on a shared database
// that fleet would adopt everyone's pending work, so it is refused.
func TestBulkRefusesAPrivateFleetOnASharedDatabase(t *testing.T) {
	t.Parallel()
	env := testEnv{}
	env["DATABASE_URL"] = testenv.IsolatedSchema(t)
	env["REDIS_URL"] = ""
	env["OPENAI_BASE_URL"] = "http://127.0.0.1:1/v1"
	env["OPENAI_API_KEY"] = "unused"
	if _, _, err := runEnv(t, env, "migrate"); err != nil {
		t.Fatal(err)
	}
	manifest := writeManifest(t, []string{`{"repo": "https://git.example/acme/x.git", "base": "main", "head": "next"}`})
	_, _, err := runEnv(t, env, "bulk", "--manifest", manifest)
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), "REDIS_URL") {
		t.Fatalf("bulk on a shared database without Redis: %v", err)
	}
}
