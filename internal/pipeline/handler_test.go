package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/llm"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

// After a dead worker's item was handed to a new task generation, the old
// task does no work when asynq delivers it again; the new one runs and
// records its worker.
func TestStaleGenerationDoesNoWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	id, err := st.CreateReview(ctx, review.NewReview{
		Repo: "/repo", Source: "git", IntentMode: "per_file", Timeout: time.Hour,
		Items: []review.Item{{Stage: review.StageIntent, Key: "p1", Payload: json.RawMessage(`{}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimItem(ctx, id, review.StageIntent, "p1", "w-dead", 0); err != nil {
		t.Fatal(err)
	}
	claimed, err := st.ClaimedItems(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.RescueItems(ctx, claimed); err != nil {
		t.Fatal(err)
	}
	calls := 0
	errRetry := errors.New("retry later")
	p := &pipeline.Pipeline{Store: st}
	h := p.WorkerHandler("w-new", pipeline.WorkFunc(func(context.Context, pipeline.Job) error { calls++; return errRetry }))
	for gen, want := range []int{0, 1} {
		task, err := pipeline.NewTask(ctx, pipeline.Payload{ReviewID: id, Stage: review.StageIntent, Item: "p1", Gen: gen})
		if err != nil {
			t.Fatal(err)
		}
		err = h.ProcessTask(ctx, task)
		if calls != want {
			t.Fatalf("generation %d: work ran %d times in all, want %d", gen, calls, want)
		}
		if gen == 0 && err != nil {
			t.Fatalf("stale task: %v, want it completed without work", err)
		}
		if gen == 1 && !errors.Is(err, errRetry) {
			t.Fatalf("current task: %v", err)
		}
	}
	it, err := st.GetItem(ctx, id, review.StageIntent, "p1")
	if err != nil || it.WorkerID != "w-new" || it.Attempts != 2 || it.Generation != 1 {
		t.Fatalf("item: %+v %v", it, err)
	}
}

// A task whose own deadline passed while it worked used its attempt: the
// item took too long, which no outage explains. A cancelled one (shutdown)
// gives its attempt back.
func TestTaskDeadlineUsesTheAttemptCancellationDoesNot(t *testing.T) {
	t.Parallel()
	for name, attempts := range map[string]int{"deadline": 1, "cancelled": 0} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bg := context.Background()
			st := stagetest.Store(t)
			id, err := st.CreateReview(bg, review.NewReview{
				Repo: "/repo", Source: "git", IntentMode: "per_file", Timeout: time.Hour,
				Items: []review.Item{{Stage: review.StageIntent, Key: "p1", Payload: json.RawMessage(`{}`)}},
			})
			if err != nil {
				t.Fatal(err)
			}
			p := &pipeline.Pipeline{Store: st}
			task, err := pipeline.NewTask(bg, pipeline.Payload{ReviewID: id, Stage: review.StageIntent, Item: "p1"})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(bg)
			if name == "deadline" {
				ctx, cancel = context.WithTimeout(bg, 2*time.Second)
			}
			defer cancel()
			// The item is claimed while the task has time; the work then
			// ends on the task's context.
			worked := false
			h := p.WorkerHandler("w1", pipeline.WorkFunc(func(ctx context.Context, _ pipeline.Job) error {
				worked = true
				if name == "cancelled" {
					cancel()
				}
				<-ctx.Done()
				return ctx.Err()
			}))
			_ = h.ProcessTask(ctx, task)
			it, err := st.GetItem(bg, id, review.StageIntent, "p1")
			if err != nil || !worked || it.Status != review.ItemPending || it.Attempts != attempts {
				t.Fatalf("item after a %s task: %+v (worked %v) %v; want pending with %d attempts", name, it, worked, err, attempts)
			}
		})
	}
}

// An item whose call the review's budget refused is skipped, not failed,
// and the review goes on.
func TestBudgetExceededSkipsItem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	id, err := st.CreateReview(ctx, review.NewReview{
		Repo: "/repo", Source: "git", IntentMode: "per_file", Timeout: time.Hour,
		// p2 stays pending, so the stage does not advance.
		Items: []review.Item{{Stage: review.StageIntent, Key: "p1", Payload: json.RawMessage(`{}`)},
			{Stage: review.StageIntent, Key: "p2", Payload: json.RawMessage(`{}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := &pipeline.Pipeline{Store: st}
	h := p.WorkerHandler("w", pipeline.WorkFunc(func(context.Context, pipeline.Job) error {
		return fmt.Errorf("chat completion: %w", llm.ErrBudgetExceeded)
	}))
	task, err := pipeline.NewTask(ctx, pipeline.Payload{ReviewID: id, Stage: review.StageIntent, Item: "p1", Gen: 0})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ProcessTask(ctx, task); err != nil {
		t.Fatalf("task: %v", err)
	}
	it, err := st.GetItem(ctx, id, review.StageIntent, "p1")
	if err != nil || it.Status != review.ItemSkippedBudget {
		t.Fatalf("item: %+v %v, want skipped_budget", it, err)
	}
}

// An outage uses no attempt, so asynq's own backoff would not grow: the
// handler asks for a wait that doubles with each outage the task meets in
// a row, capped, and forgets it once the task gets past the outage.
func TestOutagesBackOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	id, err := st.CreateReview(ctx, review.NewReview{
		Repo: "/repo", Source: "git", IntentMode: "per_file", Timeout: time.Hour,
		Items: []review.Item{{Stage: review.StageIntent, Key: "p1", Payload: json.RawMessage(`{}`)},
			{Stage: review.StageIntent, Key: "p2", Payload: json.RawMessage(`{}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	outage := true
	p := &pipeline.Pipeline{Store: st}
	h := p.WorkerHandler("w", pipeline.WorkFunc(func(context.Context, pipeline.Job) error {
		if outage {
			return fmt.Errorf("save: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
		}
		return errors.New("the item's own fault")
	}))
	task, err := pipeline.NewTask(ctx, pipeline.Payload{ReviewID: id, Stage: review.StageIntent, Item: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	for range 7 {
		err := h.ProcessTask(ctx, task)
		var oe *pipeline.OutageError
		if !errors.As(err, &oe) {
			t.Fatalf("an outage's error: %v, want an OutageError", err)
		}
		if d := pipeline.RetryDelay(0, err, llm.IsRateLimited); d != oe.Wait {
			t.Errorf("RetryDelay %s, want the outage's wait %s", d, oe.Wait)
		}
		waits = append(waits, oe.Wait)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, pipeline.MaxOutageWait, pipeline.MaxOutageWait, pipeline.MaxOutageWait}
	if fmt.Sprint(waits) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
	it, err := st.GetItem(ctx, id, review.StageIntent, "p1")
	if err != nil || it.Attempts != 0 || it.Claims != 7 {
		t.Errorf("item after 7 outages: %+v %v; want 0 attempts, 7 claims", it, err)
	}
	outage = false
	var oe *pipeline.OutageError
	if err := h.ProcessTask(ctx, task); err == nil || errors.As(err, &oe) {
		t.Fatalf("the item's own fault: %v", err)
	}
	outage = true
	if err := h.ProcessTask(ctx, task); !errors.As(err, &oe) || oe.Wait != time.Second {
		t.Errorf("the first outage after another error: %v, want a wait of 1s", err)
	}
}

// The step gets the review, its settings and the item the handler loaded,
// without loading them again.
func TestHandlerPassesWhatItLoaded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	cfg := pipeline.Settings(review.Review{})
	cfg.Harness.ExpertMinConfidence = 0.42 // not the default: the job's settings are the review's
	id, err := st.CreateReview(ctx, review.NewReview{
		Repo: "/repo", Source: "git", IntentMode: "per_file", Timeout: time.Hour, Config: pipeline.Snapshot(cfg),
		Items: []review.Item{{Stage: review.StageIntent, Key: "p1", Payload: json.RawMessage(`{"files":["a.go"]}`)},
			{Stage: review.StageIntent, Key: "p2", Payload: json.RawMessage(`{}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got pipeline.Job
	p := &pipeline.Pipeline{Store: st}
	h := p.WorkerHandler("w", pipeline.WorkFunc(func(_ context.Context, j pipeline.Job) error {
		got = j
		return nil
	}))
	pl := pipeline.Payload{ReviewID: id, Stage: review.StageIntent, Item: "p1"}
	task, err := pipeline.NewTask(ctx, pl)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ProcessTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	if got.Review.ID != id || got.Review.Status != review.ReviewRunning || got.Payload.Item != "p1" {
		t.Errorf("job review %s (%s), item %q; want %s running, p1", got.Review.ID, got.Review.Status, got.Payload.Item, id)
	}
	var ip struct{ Files []string }
	if err := json.Unmarshal(got.Item.Payload, &ip); err != nil || got.Item.Key != "p1" || got.Item.Stage != review.StageIntent ||
		got.Item.Status != review.ItemPending || len(ip.Files) != 1 || ip.Files[0] != "a.go" {
		t.Errorf("job item %+v (%v)", got.Item, err)
	}
	if got.Config.Harness.ExpertMinConfidence != 0.42 {
		t.Errorf("job settings: expert threshold %v, want the review's 0.42", got.Config.Harness.ExpertMinConfidence)
	}
}
