package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/scheduler"
)

// A task a worker took off the queue and never claimed: its lease, where a
// real asynq server keeps it, is fresh while the server lives and is not
// rescued; once nobody extends it, one pass hands the item to a new task
// generation, though no worker is on the item's row.
func TestStaleLeaseIsRescued(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, nil)
	f.fill(t, 1, 1)
	items := f.items(t)
	if err := f.rec.Pipeline.Enqueue(ctx, items); err != nil {
		t.Fatal(err)
	}
	// A server whose handler takes the task and hangs before any claim.
	took := make(chan struct{}, 1)
	srv := asynq.NewServerFromRedisClient(f.rdb, asynq.Config{Concurrency: 1, Queues: pipeline.QueueWeights(), LogLevel: asynq.FatalLevel})
	hold, release := context.WithCancel(ctx)
	if err := srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		took <- struct{}{}
		<-hold.Done()
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { release(); srv.Shutdown() })
	select {
	case <-took:
	case <-time.After(30 * time.Second):
		t.Fatal("the server never took the task")
	}
	task := pipeline.GenTaskID(items[0].ReviewID, review.StageExpert, items[0].Key, 0)
	queue := pipeline.QueueFor(review.StageExpert, false)
	if all, err := pipeline.StaleLeases(ctx, f.rdb, 0); err != nil || len(all) != 1 || all[0].TaskID != task || all[0].Queue != queue {
		t.Fatalf("every lease: %+v %v; want the task's, where asynq keeps it", all, err)
	}
	if stale, err := pipeline.StaleLeases(ctx, f.rdb, scheduler.DefaultLeaseStaleAfter); err != nil || len(stale) != 0 {
		t.Fatalf("a lease a live server extends is not stale: %+v %v", stale, err)
	}
	if st, err := f.rec.RunOnce(ctx); err != nil || st.Rescued != 0 {
		t.Fatalf("pass with a live server: %+v %v", st, err)
	}
	// The server stops extending: its lease is as a dead worker left it.
	// (The live server may extend it again between the write and the
	// pass; a few tries make that race harmless.)
	rescued := 0
	for try := 0; try < 3 && rescued == 0; try++ {
		old := float64(time.Now().Add(5 * time.Second).Unix())
		if err := f.rdb.ZAdd(ctx, "asynq:{"+queue+"}:lease", redis.Z{Score: old, Member: task}).Err(); err != nil {
			t.Fatal(err)
		}
		st, err := f.rec.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rescued = st.Rescued
	}
	if rescued != 1 {
		t.Fatalf("rescued %d items, want the one whose lease went stale", rescued)
	}
	it, err := f.st.GetItem(ctx, items[0].ReviewID, review.StageExpert, items[0].Key)
	if err != nil || it.Generation != 1 {
		t.Fatalf("item after the rescue: %+v %v; want generation 1", it, err)
	}
	if got := f.states(t, []review.Item{it}); got["pending"] != 1 {
		t.Errorf("the new generation's task: %v, want pending", got)
	}
}
