package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

func open(t *testing.T) *store.Store { return stagetest.Store(t) }

func content(s string) *string { return &s }

func newReview(t *testing.T, st *store.Store, items ...string) string {
	t.Helper()
	nr := review.NewReview{
		Repo: "/repo", Source: "git", BaseRef: "main", HeadRef: "topic", IntentMode: "per_file",
		Timeout: time.Hour,
		Files: []review.File{
			{Path: "a.go", Change: "modified", ChangedLines: []int{3, 4}, Diff: "@@", Content: content("x\ny\nz\nw\n")},
			{Path: "img.png", Change: "added", Binary: true, SkipReason: "binary"},
		},
	}
	for _, k := range items {
		nr.Items = append(nr.Items, review.Item{Stage: review.StageIntent, Key: k, Payload: json.RawMessage(`{"files":["a.go"]}`)})
	}
	id, err := st.CreateReview(context.Background(), nr)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestMigrateUpDownUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	v, err := st.SchemaVersion(ctx)
	if err != nil || v < 1 {
		t.Fatalf("version after up: %d %v", v, err)
	}
	if _, err := st.MigrateDown(ctx); err != nil {
		t.Fatalf("down: %v", err)
	}
	if v, _ := st.SchemaVersion(ctx); v != 0 {
		t.Fatalf("version after down: %d", v)
	}
	res, err := st.Migrate(ctx)
	if err != nil || len(res) == 0 {
		t.Fatalf("up again: %v %v", res, err)
	}
	newReview(t, st, "p1")
}

func TestCreateReviewStoresFilesAndLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	id := newReview(t, st, "p1", "p2")
	r, err := st.GetReview(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != review.ReviewRunning || r.Stage != review.StageIntent || r.DeadlineAt.Before(time.Now()) {
		t.Fatalf("review: %+v", r)
	}
	files, err := st.ListFiles(ctx, id)
	if err != nil || len(files) != 2 {
		t.Fatalf("files: %v %v", files, err)
	}
	if files[0].Path != "a.go" || files[0].Content == nil || len(files[0].ChangedLines) != 2 || files[1].SkipReason != "binary" {
		t.Fatalf("files: %+v", files)
	}
	if _, err := st.GetReview(ctx, "not-a-uuid"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("bad id: %v", err)
	}
	prog, err := st.Progress(ctx, id)
	if err != nil || len(prog) != 1 || prog[0].Total != 2 || prog[0].Done != 0 {
		t.Fatalf("progress: %+v %v", prog, err)
	}
}

func TestFinishIntentItemIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	id := newReview(t, st, "p1")
	fs := []review.Finding{{RiskType: review.Robustness, File: "a.go", LineStart: 3, LineEnd: 3, Description: "d", Severity: review.High, Confidence: 0.8}}
	if err := st.FinishIntentItem(ctx, id, "p1", fs); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishIntentItem(ctx, id, "p1", append(fs, fs...)); !errors.Is(err, store.ErrItemClosed) {
		t.Fatalf("second delivery: %v", err)
	}
	got, err := st.ListFindings(ctx, id)
	if err != nil || len(got) != 1 || got[0].Confidence != 0.8 || got[0].Status != review.StatusActive {
		t.Fatalf("findings: %+v %v", got, err)
	}
}

func TestAdvanceHasExactlyOneWinner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	id := newReview(t, st, "p1", "p2")
	// Not yet: items are pending.
	if won, err := st.Advance(ctx, id, review.StageIntent, review.StageVerify, nil); err != nil || won {
		t.Fatalf("advance with pending items: won=%v err=%v", won, err)
	}
	for _, k := range []string{"p1", "p2"} {
		if err := st.FinishIntentItem(ctx, id, k, nil); err != nil {
			t.Fatal(err)
		}
	}
	var wins int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			won, err := st.Advance(ctx, id, review.StageIntent, review.StageVerify, func(ctx context.Context, tx *store.Tx) ([]review.Item, error) {
				return []review.Item{{Key: "f1"}}, nil
			})
			if err != nil {
				t.Error(err)
			}
			if won {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d callers won the transition, want 1", wins)
	}
	items, err := st.ListItems(ctx, id, review.StageVerify)
	if err != nil || len(items) != 1 {
		t.Fatalf("verify items: %+v %v", items, err)
	}
}

func TestVerdictMovesConfidenceOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	id := newReview(t, st, "p1")
	if err := st.FinishIntentItem(ctx, id, "p1", []review.Finding{{RiskType: review.Static, File: "a.go", LineStart: 3, LineEnd: 3, Description: "d", Severity: review.Low, Confidence: 0.9}}); err != nil {
		t.Fatal(err)
	}
	fs, _ := st.ListFindings(ctx, id)
	if _, err := st.Advance(ctx, id, review.StageIntent, review.StageVerify, func(ctx context.Context, tx *store.Tx) ([]review.Item, error) {
		return []review.Item{{Key: "f"}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	v := review.Verdict{ReviewID: id, FindingID: fs[0].ID, Stage: review.StageVerify, Verdict: "unanchored", ConfidenceBefore: 0.9, ConfidenceAfter: 0.3}
	if err := st.FinishVerdictItem(ctx, "f", v, nil); err != nil {
		t.Fatal(err)
	}
	v.ConfidenceAfter = 0.1
	if err := st.FinishVerdictItem(ctx, "f", v, nil); !errors.Is(err, store.ErrItemClosed) {
		t.Fatalf("duplicate: %v", err)
	}
	f, err := st.GetFinding(ctx, fs[0].ID)
	if err != nil || f.Confidence != 0.3 {
		t.Fatalf("confidence %v, want 0.3 (%v)", f.Confidence, err)
	}
	vs, _ := st.ListVerdicts(ctx, id)
	if len(vs) != 1 {
		t.Fatalf("%d verdict rows, want 1", len(vs))
	}
}

func TestBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	id := newReview(t, st, "p1")
	for i := 0; i < 2; i++ {
		if err := st.ReserveLLMCall(ctx, id, 2, 0, 10); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.ReserveLLMCall(ctx, id, 2, 0, 10); !errors.Is(err, store.ErrBudgetExceeded) || !strings.Contains(err.Error(), "llm.max_calls_per_review") {
		t.Fatalf("third call: %v", err)
	}
	if err := st.RecordLLMCall(ctx, store.LLMCall{ReviewID: id, Stage: "intent", ItemKey: "p1", Model: "m", PromptHash: "h", Status: "ok", TokensIn: 900, TokensOut: 50, Cost: 0.25}); err != nil {
		t.Fatal(err)
	}
	// Tokens and cost reach the review once per item, when it closes.
	if r, _ := st.GetReview(ctx, id); r.TokensIn != 0 {
		t.Fatalf("tokens added per call: %+v", r)
	}
	if err := st.FailItem(ctx, id, review.StageIntent, "p1", "x"); err != nil {
		t.Fatal(err)
	}
	if err := st.ReserveLLMCall(ctx, id, 0, 1000, 100); !errors.Is(err, store.ErrBudgetExceeded) {
		t.Fatalf("token budget: %v", err)
	}
	r, _ := st.GetReview(ctx, id)
	if r.TokensIn != 900 || r.TokensOut != 50 || r.Cost != 0.25 {
		t.Fatalf("tokens and cost not added to the review: %+v", r)
	}
}

// A review submitted with a call budget keeps it on a worker that has
// none, and a review submitted without one is not held to the worker's.
func TestBudgetFromReviewSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	nr := review.NewReview{Repo: "/repo", Source: "git", IntentMode: "per_file", Timeout: time.Hour,
		Config: json.RawMessage(`{"LLM":{"MaxCallsPerReview":1,"MaxTokensPerReview":0}}`)}
	id, err := st.CreateReview(ctx, nr)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ReserveLLMCall(ctx, id, 0, 0, 10); err != nil {
		t.Fatal(err)
	}
	if err := st.ReserveLLMCall(ctx, id, 0, 0, 10); !errors.Is(err, store.ErrBudgetExceeded) {
		t.Fatalf("second call with a snapshot budget of 1: %v", err)
	}
	nr.Config = json.RawMessage(`{"LLM":{"MaxCallsPerReview":0,"MaxTokensPerReview":0}}`)
	free, err := st.CreateReview(ctx, nr)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := st.ReserveLLMCall(ctx, free, 1, 0, 10); err != nil {
			t.Fatalf("unlimited snapshot held to the worker's cap: %v", err)
		}
	}
}

// Items skipped for budget let the review complete, counted and marked
// incomplete; their start and end times are kept.
func TestSkipItemBudgetCompletesReview(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	id := newReview(t, st, "p1", "p2")
	queued := time.Now().Add(-time.Second).Truncate(time.Microsecond)
	if _, err := st.ClaimItemQueued(ctx, id, review.StageIntent, "p1", "w", -1, queued); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"p1", "p2"} {
		if err := st.SkipItemBudget(ctx, id, review.StageIntent, k, "budget spent"); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SkipItemBudget(ctx, id, review.StageIntent, "p1", "again"); !errors.Is(err, store.ErrItemClosed) {
		t.Fatalf("skipping a closed item: %v", err)
	}
	won, err := st.Advance(ctx, id, review.StageIntent, review.StageDone, nil)
	if err != nil || !won {
		t.Fatalf("advance: %v %v", won, err)
	}
	r, _ := st.GetReview(ctx, id)
	if r.Status != review.ReviewDone || !r.Incomplete || r.SkippedBudget != 2 || r.FailedItems != 0 {
		t.Fatalf("review after budget skips: status %s incomplete %v skipped %d failed %d", r.Status, r.Incomplete, r.SkippedBudget, r.FailedItems)
	}
	ts, err := st.ItemTimings(ctx, id)
	if err != nil || len(ts) != 2 {
		t.Fatalf("timings: %+v %v", ts, err)
	}
	if p1 := ts[0]; !p1.Queued.Equal(queued) || p1.Started.Before(p1.Queued) || p1.Finished.Before(p1.Started) {
		t.Errorf("p1 timings: %+v, queued %v", p1, queued)
	}
	if p2 := ts[1]; !p2.Queued.IsZero() || !p2.Started.IsZero() || p2.Finished.IsZero() {
		t.Errorf("p2 (never started) timings: %+v", p2)
	}
}

func TestExpiredReviewsFailWithReason(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	id, err := st.CreateReview(ctx, review.NewReview{Repo: "r", Source: "git", IntentMode: "per_file", Timeout: -time.Second,
		Items: []review.Item{{Stage: review.StageIntent, Key: "p1"}}})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := st.FailExpiredReviews(ctx, "")
	if err != nil || len(ids) != 1 || ids[0] != id {
		t.Fatalf("expired: %v %v", ids, err)
	}
	r, _ := st.GetReview(ctx, id)
	if r.Status != review.ReviewFailed || r.Error == "" || r.FinishedAt == nil {
		t.Fatalf("review: %+v", r)
	}
}

// An intent item reads its files in one query, in the order it names
// them, and records every file's packs in one statement; a file the review
// does not have is not found, and packs named for one change nothing.
func TestFilesOfAnItemAreReadAndMarkedTogether(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	id := newReview(t, st, "p1")
	files, err := st.GetFiles(ctx, id, []string{"img.png", "a.go"})
	if err != nil || len(files) != 2 || files[0].Path != "img.png" || files[1].Path != "a.go" {
		t.Fatalf("files %+v (%v), want img.png then a.go", files, err)
	}
	if files[1].Content == nil || *files[1].Content != "x\ny\nz\nw\n" {
		t.Fatalf("a.go read without its content: %+v", files[1])
	}
	if _, err := st.GetFiles(ctx, id, []string{"a.go", "missing.go"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a missing file: %v, want ErrNotFound", err)
	}
	err = st.SetFilesPacks(ctx, id, map[string][]string{"a.go": {"concurrency", "errors"}, "img.png": nil, "elsewhere.go": {"sql"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.GetFiles(ctx, id, []string{"a.go", "img.png"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got[0].Packs, []string{"concurrency", "errors"}) || len(got[1].Packs) != 0 {
		t.Fatalf("packs a.go %v, img.png %v; want [concurrency errors] and none", got[0].Packs, got[1].Packs)
	}
}
