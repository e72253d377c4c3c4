// Package e2e runs whole reviews through real Postgres and Redis, real
// queues and a worker, with only the LLM faked by an OpenAI-compatible
// server.
package e2e

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/progress"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

func TestMain(m *testing.M) {
	// A fleet test spends most of its time waiting for workers and polls.
	testenv.RaiseParallel(4)
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

// fleet is a submitter and a separate worker sharing Postgres and Redis.
type fleet struct {
	cfg    config.Config
	sub    *app.App
	worker *app.App
	stop   func()
}

func newFleet(t testing.TB, h llmfake.Handler, edit func(*config.Config)) *fleet {
	t.Helper()
	f := openFleet(t, h, edit)
	f.startWorker(t)
	return f
}

// openFleet opens the submitter and the worker's dependencies without
// starting the worker.
func openFleet(t testing.TB, h llmfake.Handler, edit func(*config.Config)) *fleet {
	t.Helper()
	ctx := context.Background()
	srv := llmfake.New(h)
	t.Cleanup(srv.Close)
	cfg := config.Default()
	cfg.DatabaseURL = testenv.IsolatedSchema(t)
	cfg.RedisURL = testenv.RedisURL(t)
	cfg.LLM.BaseURL, cfg.LLM.APIKey = srv.URL, "test"
	cfg.LLM.MaxAttempts = 1
	cfg.Worker.HealthAddr = ""
	cfg.Worker.MaxRetry = 1
	cfg.Worker.TaskCheckInterval = 20 * time.Millisecond
	cfg.Expert.SnapshotDir = t.TempDir()
	if edit != nil {
		edit(&cfg)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sub, err := app.Open(ctx, cfg, app.Options{Migrate: true, Log: quiet})
	if err != nil {
		t.Fatalf("open submitter: %v", err)
	}
	wk, err := app.Open(ctx, cfg, app.Options{Log: quiet})
	if err != nil {
		t.Fatalf("open worker: %v", err)
	}
	f := &fleet{cfg: cfg, sub: sub, worker: wk, stop: func() {}}
	t.Cleanup(func() { f.stop(); wk.Close(); sub.Close() })
	return f
}

// startWorker runs the worker until the test ends.
func (f *fleet) startWorker(t testing.TB) {
	t.Helper()
	w, err := f.worker.NewWorker(f.cfg.Worker)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(wctx) }()
	f.stop = func() { cancel(); <-done }
}

func (f *fleet) review(t *testing.T, req submit.Request) review.Review {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id, err := f.sub.Submit(ctx, req)
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	r, err := progress.Wait(ctx, f.sub.Store, id, io.Discard, time.Minute)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	return r
}

func demoRepo(t testing.TB) submit.Request {
	t.Helper()
	r, err := demo.WriteRepo(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return submit.Request{Origin: submit.FromOperator, Repo: r.Dir, Base: r.Base, Head: r.Head}
}

func verdictsByStage(t *testing.T, st *store.Store, id string) map[review.Stage][]review.Verdict {
	t.Helper()
	vs, err := st.ListVerdicts(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[review.Stage][]review.Verdict{}
	for _, v := range vs {
		out[v.Stage] = append(out[v.Stage], v)
	}
	return out
}

func TestReviewEndToEnd(t *testing.T) {
	t.Parallel()
	f := newFleet(t, demo.Handler, nil)
	r := f.review(t, demoRepo(t))
	if r.Status != review.ReviewDone {
		t.Fatalf("review %s: status %s (%s)", r.ID, r.Status, r.Error)
	}
	ctx := context.Background()
	findings, err := f.sub.Store.ListFindings(ctx, r.ID)
	if err != nil || len(findings) == 0 {
		t.Fatalf("findings: %v (%d)", err, len(findings))
	}
	byStage := verdictsByStage(t, f.sub.Store, r.ID)
	for _, st := range []review.Stage{review.StageVerify, review.StageExpert, review.StageEval} {
		if len(byStage[st]) == 0 {
			t.Errorf("no %s verdict rows", st)
		}
	}
	expertSaid := map[int64]string{}
	for _, v := range byStage[review.StageExpert] {
		expertSaid[v.FindingID] = v.Verdict
	}
	for _, v := range byStage[review.StageEval] {
		// Eval only raises what the expert confirmed (README, the confidence rule).
		want := map[string]float64{
			"confirmed": v.ConfidenceBefore, "disputed": min(v.ConfidenceBefore, 0.3), "uncertain": 0.8 * v.ConfidenceBefore,
		}[v.Verdict]
		if v.Verdict == review.VerdictConfirmed && expertSaid[v.FindingID] == review.VerdictConfirmed {
			want = max(v.ConfidenceBefore, 0.7)
		}
		if diff := v.ConfidenceAfter - want; diff > 1e-9 || diff < -1e-9 {
			t.Errorf("eval %s of finding %d: confidence %v → %v, want %v", v.Verdict, v.FindingID, v.ConfidenceBefore, v.ConfidenceAfter, want)
		}
	}
	rep, err := f.sub.Store.GetReport(ctx, r.ID)
	if err != nil {
		t.Fatalf("report not stored: %v", err)
	}
	var doc struct {
		Findings []struct {
			File     string `json:"file"`
			RiskType string `json:"risk_type"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(rep.JSON, &doc); err != nil {
		t.Fatalf("report json: %v", err)
	}
	if len(doc.Findings) == 0 {
		t.Fatalf("the report lists no finding; markdown:\n%s", rep.Markdown)
	}
	runs, err := f.sub.Store.ListExpertRuns(ctx, r.ID)
	if err != nil || len(runs) != len(byStage[review.StageExpert]) {
		t.Fatalf("expert runs: %v, %d runs for %d expert verdicts", err, len(runs), len(byStage[review.StageExpert]))
	}
	for id, run := range runs {
		if run.StopReason == "" {
			t.Errorf("expert run of finding %d has no stop reason", id)
		}
	}
}

// snapshot captures everything a duplicate delivery must not change.
type snapshot struct {
	Review   review.Review
	Findings []review.Finding
	Verdicts []review.Verdict
	Calls    int
	Report   store.Report
	Items    map[review.Stage][]review.Item
}

func take(t *testing.T, st *store.Store, id string) snapshot {
	t.Helper()
	ctx := context.Background()
	var s snapshot
	var err error
	if s.Review, err = st.GetReview(ctx, id); err != nil {
		t.Fatal(err)
	}
	if s.Findings, err = st.ListFindings(ctx, id); err != nil {
		t.Fatal(err)
	}
	if s.Verdicts, err = st.ListVerdicts(ctx, id); err != nil {
		t.Fatal(err)
	}
	calls, err := st.ListLLMCalls(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	s.Calls = len(calls)
	if s.Report, err = st.GetReport(ctx, id); err != nil {
		t.Fatal(err)
	}
	s.Items = map[review.Stage][]review.Item{}
	for _, stg := range pipeline.TaskStages {
		if s.Items[stg], err = st.ListItems(ctx, id, stg); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestDuplicateDeliveryChangesNothing(t *testing.T) {
	t.Parallel()
	f := newFleet(t, demo.Handler, nil)
	r := f.review(t, demoRepo(t))
	if r.Status != review.ReviewDone {
		t.Fatalf("status %s: %s", r.Status, r.Error)
	}
	before := take(t, f.sub.Store, r.ID)
	var all []review.Item
	for _, items := range before.Items {
		all = append(all, items...)
	}
	if len(all) < 5 {
		t.Fatalf("expected items in every stage, got %d", len(all))
	}
	ctx := context.Background()
	if err := f.sub.Pipeline.Enqueue(ctx, all); err != nil {
		t.Fatalf("enqueue again: %v", err)
	}
	// Wait until every queue is drained.
	deadline := time.Now().Add(time.Minute)
	for {
		busy := 0
		for _, stg := range pipeline.TaskStages {
			if q, err := f.sub.Inspector.GetQueueInfo(pipeline.Queue(stg)); err == nil {
				busy += q.Pending + q.Active + q.Scheduled + q.Retry
			}
		}
		if busy == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queues still busy: %d tasks", busy)
		}
		time.Sleep(50 * time.Millisecond)
	}
	after := take(t, f.sub.Store, r.ID)
	b1, _ := json.Marshal(before)
	b2, _ := json.Marshal(after)
	if string(b1) != string(b2) {
		t.Fatalf("a second delivery changed the review:\nbefore %s\nafter  %s", b1, b2)
	}
}

func TestAnySchemaValidReplyCompletes(t *testing.T) {
	t.Parallel()
	f := newFleet(t, func(_ context.Context, req openaiRequest) llmfake.Reply { return llmfake.FromSchema(req) }, nil)
	r := f.review(t, demoRepo(t))
	if r.Status != review.ReviewDone {
		t.Fatalf("status %s: %s", r.Status, r.Error)
	}
	if _, err := f.sub.Store.GetReport(context.Background(), r.ID); err != nil {
		t.Fatalf("report: %v", err)
	}
}

func TestAllLLMCallsFailing(t *testing.T) {
	t.Parallel()
	f := newFleet(t, func(context.Context, openaiRequest) llmfake.Reply { return llmfake.Fail(500, "boom") }, nil)
	r := f.review(t, demoRepo(t))
	if r.Status != review.ReviewFailed {
		t.Fatalf("a review that reviewed nothing ended %s: %s", r.Status, r.Error)
	}
	failed, err := f.sub.Store.FailedItems(context.Background(), r.ID)
	if err != nil || len(failed) == 0 {
		t.Fatalf("expected failed intent items, got %v %v", failed, err)
	}
	rep := failureReport(t, f.sub.Store, r.ID)
	if !contains(rep.Markdown, "500") {
		t.Errorf("the report does not say why items failed:\n%s", rep.Markdown)
	}
}

func TestStoredReportKeepsItsKeyOrder(t *testing.T) {
	t.Parallel()
	f := newFleet(t, demo.Handler, nil)
	r := f.review(t, demoRepo(t))
	rep, err := f.sub.Store.GetReport(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if k := firstKey(t, rep.JSON); k != "schema_version" {
		t.Errorf("JSON report starts with %q, want schema_version", k)
	}
	if k := firstKey(t, rep.SARIF); k != "$schema" {
		t.Errorf("SARIF log starts with %q, want $schema", k)
	}
}

func firstKey(t *testing.T, doc []byte) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(doc)))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	k, err := dec.Token()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := k.(string)
	return s
}
