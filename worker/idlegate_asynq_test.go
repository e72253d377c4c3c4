package worker

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

// evalCounter counts the scripts that reach Redis, and those among them
// the gate took for dequeues. It sits behind the gate, so what it counts
// is what the server really sent.
type evalCounter struct{ evals, dequeues atomic.Int64 }

func (c *evalCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *evalCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (c *evalCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := strings.ToLower(cmd.Name()); n == "evalsha" || n == "eval" {
			c.evals.Add(1)
			if isDequeue(cmd) {
				c.dequeues.Add(1)
			}
		}
		return next(ctx, cmd)
	}
}

// The gate leans on how asynq dequeues: one script per queue whose first
// keys are the queue's pending and paused lists, answering nil when the
// queue is empty. This runs the asynq in go.mod against a real Redis with
// the gate, polling every 5 ms: an idle server must send next to no
// scripts while gated, and a task announced with a wake-up must still run
// at once. If an asynq upgrade renames the keys or changes the empty
// answer, the gate stops recognising or counting the dequeues and the
// first half fails; if the gate held tasks back, the second half does.
func TestIdleGateHoldsARealAsynqServer(t *testing.T) {
	addr, db := testenv.RedisAddr(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr, DB: db})
	queues := map[string]int{"gate-a": 2, "gate-b": 1}
	gate := newIdleGate(len(queues), time.Hour)
	defer gate.Close()
	var count evalCounter
	rdb.AddHook(gate)
	rdb.AddHook(&count)
	defer rdb.Close()

	ran := make(chan struct{}, 1)
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: 1, Queues: queues, TaskCheckInterval: 5 * time.Millisecond,
		LogLevel: asynq.FatalLevel,
	})
	if err := srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		ran <- struct{}{}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()

	// Ungated, 5 ms polls over two queues send about 400 dequeues a
	// second; gated, the first empty round is the last until a wake-up.
	time.Sleep(time.Second)
	if d := count.dequeues.Load(); d == 0 {
		t.Fatalf("no command the server sent looks like a dequeue (%d scripts): asynq's dequeue script changed its keys", count.evals.Load())
	}
	idleEvals := count.evals.Load()
	t.Logf("idle gated server, 1 s at a 5 ms poll: %d scripts, %d of them dequeues", idleEvals, count.dequeues.Load())
	if idleEvals > 30 {
		t.Fatalf("an idle gated server sent %d scripts in a second (%d dequeues): the gate no longer holds asynq's polling", idleEvals, count.dequeues.Load())
	}

	client := asynq.NewClientFromRedisClient(redis.NewClient(&redis.Options{Addr: addr, DB: db}))
	defer client.Close()
	if _, err := client.Enqueue(asynq.NewTask("gate:probe", nil), asynq.Queue("gate-b")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	gate.Wake()
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("a task announced with a wake-up did not run within 5s: the gate holds real dequeues")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the announced task waited %s", took)
	}
}
