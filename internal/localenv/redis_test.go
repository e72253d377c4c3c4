package localenv

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

func TestStartRedisKeysExpireOnWallClock(t *testing.T) {
	t.Parallel()
	addr, stop, err := StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	if err := rdb.Set(ctx, "short", "v", 200*time.Millisecond).Err(); err != nil {
		t.Fatalf("set: %v", err)
	}
	if n, err := rdb.Exists(ctx, "short").Result(); err != nil || n != 1 {
		t.Fatalf("exists right after set = %d, %v; want 1", n, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := rdb.Exists(ctx, "short").Result()
		if err != nil {
			t.Fatalf("exists: %v", err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("key with a 200ms TTL still exists after 5s: TTLs do not follow the wall clock")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestStartRedisStopClosesListener(t *testing.T) {
	t.Parallel()
	addr, stop, err := StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	stop()
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		conn.Close()
		t.Fatalf("%s still accepts connections after stop", addr)
	}
}

// TestAsynqOnInProcessRedis runs asynq's client, server and inspector against
// the in-process Redis: immediate, scheduled and retried tasks, unique locks
// whose TTL has to expire on the wall clock, and queue inspection.
func TestAsynqOnInProcessRedis(t *testing.T) {
	t.Parallel()
	addr, stop, err := StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	opt := asynq.RedisClientOpt{Addr: addr}

	var processed, failedOnce atomic.Int32
	done := make(chan string, 8)
	mux := asynq.NewServeMux()
	mux.HandleFunc("test:ok", func(ctx context.Context, task *asynq.Task) error {
		processed.Add(1)
		done <- "ok:" + string(task.Payload())
		return nil
	})
	mux.HandleFunc("test:flaky", func(ctx context.Context, task *asynq.Task) error {
		if failedOnce.Add(1) == 1 {
			return errors.New("first attempt fails")
		}
		done <- "flaky"
		return nil
	})
	srv := asynq.NewServer(opt, asynq.Config{
		Concurrency:       2,
		Queues:            map[string]int{"default": 1},
		TaskCheckInterval: 20 * time.Millisecond,
		// Scheduled tasks and retries are moved to pending by a poller
		// whose default period is 5s.
		DelayedTaskCheckInterval: 50 * time.Millisecond,
		RetryDelayFunc:           func(int, error, *asynq.Task) time.Duration { return 100 * time.Millisecond },
		LogLevel:                 asynq.FatalLevel,
	})
	client := asynq.NewClient(opt)
	defer client.Close()

	// Both before the server starts: a task already processed and deleted
	// would no longer conflict.
	if _, err := client.Enqueue(asynq.NewTask("test:ok", []byte("now")), asynq.TaskID("t-now")); err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	if _, err := client.Enqueue(asynq.NewTask("test:ok", []byte("now")), asynq.TaskID("t-now")); !errors.Is(err, asynq.ErrTaskIDConflict) {
		t.Fatalf("duplicate task id: err = %v, want ErrTaskIDConflict", err)
	}
	if err := srv.Start(mux); err != nil {
		t.Fatalf("start asynq server: %v", err)
	}
	defer srv.Shutdown()
	if _, err := client.Enqueue(asynq.NewTask("test:ok", []byte("later")), asynq.ProcessIn(300*time.Millisecond)); err != nil {
		t.Fatalf("enqueue scheduled: %v", err)
	}
	if _, err := client.Enqueue(asynq.NewTask("test:flaky", nil), asynq.MaxRetry(3)); err != nil {
		t.Fatalf("enqueue flaky: %v", err)
	}

	want := map[string]bool{"ok:now": false, "ok:later": false, "flaky": false}
	timeout := time.After(15 * time.Second)
	for seen := 0; seen < len(want); {
		select {
		case got := <-done:
			if _, ok := want[got]; !ok {
				t.Fatalf("unexpected completion %q", got)
			}
			want[got] = true
			seen++
		case <-timeout:
			t.Fatalf("tasks not all processed within 15s: %v", want)
		}
	}
	if n := processed.Load(); n != 2 {
		t.Errorf("test:ok processed %d times, want 2", n)
	}
	if n := failedOnce.Load(); n != 2 {
		t.Errorf("test:flaky attempted %d times, want 2 (one failure, one retry)", n)
	}

	// A unique lock is a key with a TTL: a second enqueue is rejected while it
	// lives and accepted once it has expired on the wall clock. The queue has
	// no server, so the task stays pending and only the TTL can free the lock.
	unique := func() error {
		_, err := client.Enqueue(asynq.NewTask("test:ok", []byte("unique")),
			asynq.Unique(time.Second), asynq.Queue("parked"))
		return err
	}
	if err := unique(); err != nil {
		t.Fatalf("first unique enqueue: %v", err)
	}
	if err := unique(); !errors.Is(err, asynq.ErrDuplicateTask) {
		t.Fatalf("second unique enqueue: err = %v, want ErrDuplicateTask", err)
	}
	time.Sleep(1100 * time.Millisecond)
	if err := unique(); err != nil {
		t.Fatalf("unique enqueue after the lock TTL: %v", err)
	}

	insp := asynq.NewInspector(opt)
	defer insp.Close()
	info, err := insp.GetQueueInfo("default")
	if err != nil {
		t.Fatalf("inspect queue: %v", err)
	}
	if info.Completed != 0 || info.Pending != 0 || info.Processed < 3 {
		t.Errorf("default queue: pending %d, completed %d, processed %d; want 0, 0, >=3",
			info.Pending, info.Completed, info.Processed)
	}
	parked, err := insp.GetQueueInfo("parked")
	if err != nil {
		t.Fatalf("inspect parked queue: %v", err)
	}
	if parked.Pending != 2 {
		t.Errorf("pending tasks in parked queue = %d, want 2", parked.Pending)
	}
	servers, err := insp.Servers()
	if err != nil {
		t.Fatalf("list servers: %v", err)
	}
	if len(servers) != 1 {
		t.Errorf("servers seen by inspector = %d, want 1", len(servers))
	}
}
