package heartbeat_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/reviewfleet/reviewfleet/internal/heartbeat"
	"github.com/reviewfleet/reviewfleet/internal/localenv"
)

// A process running an asynq server is alive under its worker ID, from
// the moment the server starts; once the server shut down cleanly it is
// not alive, and an ID no server carries never is.
func TestAliveFollowsTheQueueServer(t *testing.T) {
	addr, stop, err := localenv.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	insp := asynq.NewInspectorFromRedisClient(rdb)
	me, other := heartbeat.WorkerID(), "elsewhere:1"
	if alive, err := heartbeat.Alive(insp, []string{me}); err != nil || alive[me] {
		t.Fatalf("before any server: alive=%v err=%v", alive, err)
	}
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{Concurrency: 1, Queues: map[string]int{"hb": 1}, LogLevel: asynq.FatalLevel})
	if err := srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		alive, err := heartbeat.Alive(insp, []string{me, other})
		if err != nil {
			t.Fatal(err)
		}
		if alive[other] {
			t.Fatal("a worker no server carries is alive")
		}
		if alive[me] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the running server's process never showed up alive")
		}
	}
	srv.Shutdown()
	if alive, err := heartbeat.Alive(insp, []string{me}); err != nil || alive[me] {
		t.Errorf("after a clean stop: alive=%v err=%v", alive, err)
	}
	if _, err := heartbeat.Alive(fakeServers{err: errors.New("redis down")}, []string{me}); err == nil {
		t.Error("an unreadable server list reads as an answer")
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
