package heartbeat_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
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

type fakeServers struct {
	list []*asynq.ServerInfo
	err  error
}

func (f fakeServers) Servers() ([]*asynq.ServerInfo, error) { return f.list, f.err }

func TestNoWorkerNamesAQueueNobodyServes(t *testing.T) {
	t.Parallel()
	serving := &asynq.ServerInfo{Status: "active", Queues: map[string]int{"intent": 10}}
	stopping := &asynq.ServerInfo{Status: "stopped", Queues: map[string]int{"expert": 30}}
	if msg := heartbeat.NoWorker(fakeServers{list: []*asynq.ServerInfo{serving}}, "intent"); msg != "" {
		t.Errorf("a live server serves intent, got %q", msg)
	}
	if msg := heartbeat.NoWorker(fakeServers{}, "intent"); !strings.Contains(msg, "no live worker") || !strings.Contains(msg, "intent") {
		t.Errorf("no server at all: %q", msg)
	}
	if msg := heartbeat.NoWorker(fakeServers{list: []*asynq.ServerInfo{serving, stopping}}, "expert"); !strings.Contains(msg, "expert") {
		t.Errorf("a stopping server serves nothing: %q", msg)
	}
	if msg := heartbeat.NoWorker(fakeServers{err: errors.New("redis down")}, "intent"); msg != "" {
		t.Errorf("an unreadable list must not be taken for an empty fleet: %q", msg)
	}
}
