package heartbeat_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reviewfleet/reviewfleet/internal/heartbeat"
	"github.com/reviewfleet/reviewfleet/internal/localenv"
)

// A beating worker is alive, with a key that expires on its own; one that
// stopped cleanly is not alive at once.
func TestBeatAndAlive(t *testing.T) {
	addr, stop, err := localenv.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		heartbeat.Beat(ctx, rdb, "w1", 20*time.Millisecond, time.Minute, slog.New(slog.DiscardHandler))
	}()
	bg := context.Background()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		alive, err := heartbeat.Alive(bg, rdb, []string{"w1", "w2"})
		if err != nil {
			t.Fatal(err)
		}
		if alive["w2"] {
			t.Fatal("a worker that never beat is alive")
		}
		if alive["w1"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the beating worker never showed up alive")
		}
	}
	if ttl, err := rdb.TTL(bg, heartbeat.Key("w1")).Result(); err != nil || ttl <= 0 || ttl > time.Minute {
		t.Errorf("heartbeat TTL = %s (%v), want at most a minute", ttl, err)
	}
	cancel()
	<-done
	if alive, err := heartbeat.Alive(bg, rdb, []string{"w1"}); err != nil || alive["w1"] {
		t.Errorf("after a clean stop: alive=%v err=%v", alive, err)
	}
}
