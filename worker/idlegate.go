package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// idleGate is a go-redis hook on the asynq server's connection that keeps
// an idle worker from polling every queue every task_check_interval.
// asynq dequeues by running one script per queue; once a whole round of
// them found nothing, the next round waits until a task is announced on
// pipeline.WakeChannel (wake) or maxIdle has passed (tasks that asynq
// itself moves to a queue, such as retries, are not announced). So an
// idle worker sends one round per maxIdle instead of one per poll, and a
// hop is as quick as the announcement.
type idleGate struct {
	queues  int
	maxIdle time.Duration
	wake    chan struct{}
	done    chan struct{}
	stop    sync.Once

	mu     sync.Mutex
	misses int // scripts in a row that found their queue empty
}

func newIdleGate(queues int, maxIdle time.Duration) *idleGate {
	return &idleGate{queues: queues, maxIdle: maxIdle, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// Wake lets the next dequeue round run at once.
func (g *idleGate) Wake() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// Close releases a round waiting in the gate and stops gating.
func (g *idleGate) Close() { g.stop.Do(func() { close(g.done) }) }

// DialHook passes dials through.
func (g *idleGate) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessPipelineHook passes pipelines through.
func (g *idleGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// ProcessHook gates asynq's dequeue script.
func (g *idleGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !isDequeue(cmd) {
			return next(ctx, cmd)
		}
		g.waitIfIdle()
		err := next(ctx, cmd)
		g.mu.Lock()
		switch {
		case errors.Is(err, redis.Nil):
			g.misses++
		case err == nil:
			g.misses = 0
		}
		g.mu.Unlock()
		return err
	}
}

// waitIfIdle blocks the round after an empty one until a wake-up, maxIdle
// or Close.
func (g *idleGate) waitIfIdle() {
	g.mu.Lock()
	idle := g.misses >= g.queues
	g.mu.Unlock()
	if !idle {
		return
	}
	t := time.NewTimer(g.maxIdle)
	defer t.Stop()
	select {
	case <-g.wake:
	case <-t.C:
	case <-g.done:
	}
	g.mu.Lock()
	g.misses = 0
	g.mu.Unlock()
}

// isDequeue recognises asynq's dequeue script by its keys: a queue's
// pending, paused, active and lease keys. These are asynq's private
// layout; TestIdleGateHoldsARealAsynqServer runs the asynq in go.mod
// against Redis and fails if they or the empty answer change.
func isDequeue(cmd redis.Cmder) bool {
	args := cmd.Args()
	if len(args) < 7 {
		return false
	}
	name := strings.ToLower(fmt.Sprint(args[0]))
	if name != "evalsha" && name != "eval" || fmt.Sprint(args[2]) != "4" {
		return false
	}
	k1, k2 := fmt.Sprint(args[3]), fmt.Sprint(args[4])
	return strings.HasPrefix(k1, "asynq:{") && strings.HasSuffix(k1, "}:pending") && strings.HasSuffix(k2, "}:paused")
}
