package worker

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func dequeueCmd(q string) *redis.Cmd {
	k := "asynq:{" + q + "}:"
	return redis.NewCmd(context.Background(), "evalsha", "sha", 4, k+"pending", k+"paused", k+"active", k+"lease", 1, "x")
}

func TestIdleGateWaitsAfterAnEmptyRoundUntilWoken(t *testing.T) {
	t.Parallel()
	g := newIdleGate(2, time.Hour)
	empty := func(context.Context, redis.Cmder) error { return redis.Nil }
	other := 0
	h := g.ProcessHook(func(ctx context.Context, cmd redis.Cmder) error {
		if !isDequeue(cmd) {
			other++
			return nil
		}
		return empty(ctx, cmd)
	})
	// Other commands are never gated.
	if err := h(context.Background(), redis.NewCmd(context.Background(), "evalsha", "sha", 2, "a", "b", 1, 2)); err != nil || other != 1 {
		t.Fatalf("other command: %v, %d", err, other)
	}
	for _, q := range []string{"a", "b"} { // one empty round over both queues
		if err := h(context.Background(), dequeueCmd(q)); err != redis.Nil {
			t.Fatalf("dequeue %s: %v", q, err)
		}
	}
	done := make(chan struct{})
	go func() { _ = h(context.Background(), dequeueCmd("a")); close(done) }()
	select {
	case <-done:
		t.Fatal("the round after an empty one did not wait")
	case <-time.After(50 * time.Millisecond):
	}
	g.Wake()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a wake-up did not release the waiting round")
	}
	// After the wake-up the round runs on without waiting.
	if err := h(context.Background(), dequeueCmd("b")); err != redis.Nil {
		t.Fatal(err)
	}
	// That round found nothing again: closed, the gate does not wait.
	g.Close()
	if err := h(context.Background(), dequeueCmd("a")); err != redis.Nil {
		t.Fatal(err)
	}
}
