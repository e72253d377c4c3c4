package pipeline_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/store"
)

// taskLog is a queue that keeps the types of the tasks handed to it.
type taskLog struct {
	mu    sync.Mutex
	types []string
}

func (q *taskLog) EnqueueContext(_ context.Context, t *asynq.Task, _ ...asynq.Option) (*asynq.TaskInfo, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.types = append(q.types, t.Type())
	return &asynq.TaskInfo{}, nil
}

// The slot an item frees is filled at once: a worker finishing an item
// admits the queued batch review the slots now have room for, without a
// review ending or the scheduler passing.
func TestAnEndingItemAdmitsTheNextReview(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	b := newBatch(ctx, t, st)
	item := func(k string) review.Item {
		return review.Item{Stage: review.StageIntent, Key: k, Payload: json.RawMessage(`{}`)}
	}
	running, err := st.CreateReview(ctx, review.NewReview{Repo: "/repo", Source: "git", IntentMode: "per_file",
		Timeout: time.Hour, Kind: review.KindBulk, BatchID: b.ID, Items: []review.Item{item("p1"), item("p2")}})
	if err != nil {
		t.Fatal(err)
	}
	queued, err := st.CreateReview(ctx, review.NewReview{Repo: "/repo", Source: "git", IntentMode: "per_file",
		Timeout: time.Hour, Kind: review.KindBulk, BatchID: b.ID, Queued: true, Items: []review.Item{item("q1")}})
	if err != nil {
		t.Fatal(err)
	}
	q := &taskLog{}
	// One slot: room for two pending items of batch reviews, both taken.
	p := &pipeline.Pipeline{Store: st, Queue: q, Capacity: &pipeline.Capacity{
		Slots: func() (int, error) { return 1, nil },
	}}
	if n, err := p.Admit(ctx); err != nil || n != 0 {
		t.Fatalf("admitted %d with the slot's room taken (%v)", n, err)
	}
	// Admit just ran: the next item's end must not wait for the interval.
	p.Capacity.AdmitEvery = time.Nanosecond
	h := p.WorkerHandler("w", pipeline.WorkFunc(func(ctx context.Context, j pipeline.Job) error {
		return st.FinishIntentItem(ctx, j.Payload.ReviewID, j.Payload.Item, nil)
	}))
	task, err := pipeline.NewTask(ctx, pipeline.Payload{ReviewID: running, Stage: review.StageIntent, Item: "p1", Bulk: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ProcessTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	r, err := st.GetReview(ctx, queued)
	if err != nil || r.Status != review.ReviewRunning {
		t.Fatalf("queued review after an item ended: %s (%v), want running", r.Status, err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.types) != 1 {
		t.Fatalf("tasks enqueued: %v, want the admitted review's one item", q.types)
	}
}

// While calls wait for the fleet's shared quota, batch reviews wait in the
// queue, where their deadlines do not run, and interactive ones still
// start; once the backlog is gone the batch goes on.
func TestQuotaBacklogHoldsBatchReviews(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	b := newBatch(ctx, t, st)
	items := []review.Item{{Stage: review.StageIntent, Key: "p1", Payload: json.RawMessage(`{}`)}}
	batch, err := st.CreateReview(ctx, review.NewReview{Repo: "/repo", Source: "git", IntentMode: "per_file",
		Timeout: time.Hour, Kind: review.KindBulk, BatchID: b.ID, Queued: true, Items: items})
	if err != nil {
		t.Fatal(err)
	}
	interactive, err := st.CreateReview(ctx, review.NewReview{Repo: "/repo", Source: "git", IntentMode: "per_file",
		Timeout: time.Hour, Queued: true, Items: items})
	if err != nil {
		t.Fatal(err)
	}
	backlog := 3 * time.Second
	p := &pipeline.Pipeline{Store: st, Queue: &taskLog{}, Capacity: &pipeline.Capacity{
		Slots:        func() (int, error) { return 8, nil },
		QuotaBacklog: func(context.Context) time.Duration { return backlog },
	}}
	if _, err := p.Admit(ctx); err != nil {
		t.Fatal(err)
	}
	status := func(id string) review.ReviewStatus {
		r, err := st.GetReview(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return r.Status
	}
	if s := status(interactive); s != review.ReviewRunning {
		t.Fatalf("interactive review %s during a quota backlog, want running", s)
	}
	if s := status(batch); s != review.ReviewQueued {
		t.Fatalf("batch review %s during a quota backlog, want queued", s)
	}
	backlog = 0
	if _, err := p.Admit(ctx); err != nil {
		t.Fatal(err)
	}
	if s := status(batch); s != review.ReviewRunning {
		t.Fatalf("batch review %s once the backlog is gone, want running", s)
	}
}

// newBatch creates an empty batch.
func newBatch(ctx context.Context, t *testing.T, st *store.Store) store.Batch {
	t.Helper()
	b, err := st.CreateBatch(ctx, store.Batch{ID: uuid.NewString(), Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
