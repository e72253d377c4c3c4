package scheduler_test

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/reviewfleet/reviewfleet/internal/heartbeat"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/scheduler"
	"github.com/reviewfleet/reviewfleet/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

type fixture struct {
	st  *store.Store
	dsn string
	rdb *redis.Client
	rec *scheduler.Reconciler
}

func newFixture(t testing.TB, rdbOpts *redis.Options) *fixture {
	t.Helper()
	ctx := context.Background()
	dsn := testenv.IsolatedSchema(t)
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if rdbOpts == nil {
		addr, db := testenv.RedisAddr(t)
		rdbOpts = &redis.Options{Addr: addr, DB: db}
	}
	rdb := redis.NewClient(rdbOpts)
	t.Cleanup(func() { _ = rdb.Close() })
	client := asynq.NewClientFromRedisClient(rdb)
	p := &pipeline.Pipeline{Store: st, Queue: client, MaxRetry: 2, EnqueueParallelism: 16}
	rec := &scheduler.Reconciler{
		Store: st, Pipeline: p, Inspector: asynq.NewInspectorFromRedisClient(rdb), Redis: rdb,
		RequeueAfter: 0, BatchSize: 1000, HeartbeatRecheck: 10 * time.Millisecond,
		Log: slog.New(slog.DiscardHandler),
	}
	return &fixture{st: st, dsn: dsn, rdb: rdb, rec: rec}
}

// fill adds running reviews at the expert stage with n pending items each.
func (f *fixture) fill(t testing.TB, reviews, n int) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, f.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, `
		WITH r AS (
			INSERT INTO reviews (id, repo, source, status, stage, deadline_at)
			SELECT gen_random_uuid(), '/repo', 'git', 'running', 'expert', now() + interval '1 day'
			FROM generate_series(1, $1::int) RETURNING id)
		INSERT INTO stage_items (review_id, stage, item_key)
		SELECT r.id, 'expert', 'f' || g FROM r, generate_series(1, $2::int) g`, reviews, n)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `ANALYZE stage_items; ANALYZE reviews`); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) items(t testing.TB) []review.Item {
	t.Helper()
	var all []review.Item
	var cur store.PendingCursor
	for {
		// olderThan is negative so that just-enqueued items count too.
		page, err := f.st.PendingPage(context.Background(), cur, -time.Hour, 5000, "")
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if len(page) < 5000 {
			return all
		}
		cur = store.After(page[len(page)-1])
	}
}

func (f *fixture) states(t testing.TB, items []review.Item) map[string]int {
	t.Helper()
	got, err := pipeline.TaskStates(context.Background(), f.rdb, items)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, s := range got {
		out[s]++
	}
	return out
}

// The task key read in a pipeline is where asynq really keeps the task.
func TestTaskStatesMatchAsynq(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.fill(t, 1, 3)
	items := f.items(t)
	if got := f.states(t, items); got[""] != 3 {
		t.Fatalf("before enqueue: %v, want 3 missing", got)
	}
	if err := f.rec.Pipeline.Enqueue(context.Background(), items[:2]); err != nil {
		t.Fatal(err)
	}
	if got := f.states(t, items); got["pending"] != 2 || got[""] != 1 {
		t.Fatalf("after enqueueing two: %v", got)
	}
}

// After Redis loses every queue, one pass puts every pending item back,
// page by page, and a second pass finds nothing to do.
func TestRestoreAfterFlush(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, nil)
	f.fill(t, 3, 900) // 2,700 items: three pages of 1,000
	st, err := f.rec.RunOnce(ctx)
	if err != nil || st.Requeued != 2700 {
		t.Fatalf("first pass: %+v %v", st, err)
	}
	if err := f.rdb.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	st, err = f.rec.RunOnce(ctx)
	if err != nil || st.Requeued != 2700 {
		t.Fatalf("after flush: %+v %v, want 2700 requeued", st, err)
	}
	if got := f.states(t, f.items(t)); got["pending"] != 2700 {
		t.Fatalf("task states after restore: %v", got)
	}
	st, err = f.rec.RunOnce(ctx)
	if err != nil || st.Requeued != 0 || st.Refreshed != 2700 {
		t.Fatalf("pass over intact queues: %+v %v", st, err)
	}
}

// Items of a worker whose heartbeat is gone run again under a new task
// generation; those of a live worker are left alone.
func TestRescueDeadWorkersItems(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, nil)
	f.fill(t, 1, 2)
	if _, err := f.rec.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	items := f.items(t)
	// Both tasks are taken by workers; asynq would mark them active.
	// The live worker is this process: an asynq server of it beats (on a
	// queue of its own, so it takes none of the items' tasks).
	live := heartbeat.WorkerID()
	srv := asynq.NewServerFromRedisClient(f.rdb, asynq.Config{Concurrency: 1, Queues: map[string]int{"rescue-test-live": 1}, LogLevel: asynq.FatalLevel})
	if err := srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	for i, w := range []string{"w-dead:1", live} {
		if _, err := f.st.ClaimItem(ctx, items[i].ReviewID, items[i].Stage, items[i].Key, w, 0); err != nil {
			t.Fatal(err)
		}
		key := "asynq:{" + pipeline.Queue(review.StageExpert) + "}:t:" + pipeline.TaskID(items[i].ReviewID, items[i].Stage, items[i].Key)
		if err := f.rdb.HSet(ctx, key, "state", "active").Err(); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if alive, err := heartbeat.Alive(f.rec.Inspector, []string{live}); err != nil || alive[live] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the live server never beat")
		}
	}
	st, err := f.rec.RunOnce(ctx)
	if err != nil || st.Rescued != 1 {
		t.Fatalf("pass: %+v %v, want one item rescued", st, err)
	}
	dead, _ := f.st.GetItem(ctx, items[0].ReviewID, items[0].Stage, items[0].Key)
	alive, _ := f.st.GetItem(ctx, items[1].ReviewID, items[1].Stage, items[1].Key)
	if dead.Generation != 1 || dead.WorkerID != "" || alive.Generation != 0 || alive.WorkerID != live {
		t.Fatalf("after rescue: dead %+v, alive %+v", dead, alive)
	}
	if got := f.states(t, []review.Item{dead}); got["pending"] != 1 {
		t.Fatalf("rescued item's new task: %v, want pending", got)
	}
	if st, err := f.rec.RunOnce(ctx); err != nil || st.Rescued != 0 {
		t.Fatalf("second pass: %+v %v, want nothing rescued again", st, err)
	}
}

// A second scheduler replica does nothing while the first reconciles.
func TestOneReconcilerAtATime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, nil)
	f.fill(t, 1, 5)
	release, ok, err := f.st.TryLeader(ctx, scheduler.LeaderLock)
	if err != nil || !ok {
		t.Fatalf("take the lock: %v %v", ok, err)
	}
	st, err := f.rec.RunOnce(ctx)
	if err != nil || !st.Follower || st.Requeued != 0 {
		t.Fatalf("pass while another holds the lock: %+v %v", st, err)
	}
	release()
	if st, err := f.rec.RunOnce(ctx); err != nil || st.Follower || st.Requeued != 5 {
		t.Fatalf("pass after release: %+v %v", st, err)
	}
}

// BenchmarkRestore measures one reconcile pass restoring RESTORE_ITEMS
// pending items (default 10,000; BENCHMARKS.md records 150,000) after a
// Redis flush, against a redis-server of its own.
//
//	RESTORE_ITEMS=150000 go test ./scheduler -run '^$' -bench Restore -benchtime 3x
func BenchmarkRestore(b *testing.B) {
	n := 10_000
	if v, err := strconv.Atoi(os.Getenv("RESTORE_ITEMS")); err == nil && v > 0 {
		n = v
	}
	srv := testenv.StartRedisServer(b)
	f := newFixture(b, &redis.Options{Addr: srv.Addr})
	f.rec.BatchSize = 2000
	const perReview = 500
	f.fill(b, (n+perReview-1)/perReview, perReview)
	total := ((n + perReview - 1) / perReview) * perReview
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if err := f.rdb.FlushDB(ctx).Err(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		st, err := f.rec.RunOnce(ctx)
		if err != nil || st.Requeued != total {
			b.Fatalf("pass: %+v %v, want %d requeued", st, err, total)
		}
	}
	b.ReportMetric(float64(total), "items/op")
	b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
}
