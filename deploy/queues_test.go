package deploy

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.yaml.in/yaml/v3"

	"github.com/reviewfleet/reviewfleet/internal/localenv"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
)

// TestScaledObjectListsHoldTasks enqueues one task per review queue with
// asynq and checks that each pending list the KEDA ScaledObject watches then
// holds exactly one task; then a worker takes them all and holds them, and
// each active list must hold one. A change of asynq's key layout or of the
// queue names cannot silently stop the autoscaling.
func TestScaledObjectListsHoldTasks(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("k8s/components/keda/scaledobject.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var so struct {
		Spec struct {
			Triggers []struct {
				Metadata map[string]string `yaml:"metadata"`
			} `yaml:"triggers"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(b, &so); err != nil {
		t.Fatalf("parse ScaledObject: %v", err)
	}
	if len(so.Spec.Triggers) != 4*len(pipeline.TaskStages) {
		t.Fatalf("%d triggers for %d task stages, each with an interactive and a bulk queue, each pending and active", len(so.Spec.Triggers), len(pipeline.TaskStages))
	}

	addr, stop, err := localenv.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	client := asynq.NewClient(asynq.RedisClientOpt{Addr: addr})
	defer client.Close()
	for _, stage := range pipeline.TaskStages {
		for _, q := range []string{pipeline.Queue(stage), pipeline.BulkQueue(stage)} {
			if _, err := client.Enqueue(asynq.NewTask("probe", nil), asynq.Queue(q)); err != nil {
				t.Fatalf("enqueue on %s: %v", q, err)
			}
		}
	}

	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	lengths := func(state string) map[string]int64 {
		out := map[string]int64{}
		for _, tr := range so.Spec.Triggers {
			list := tr.Metadata["listName"]
			if !strings.HasSuffix(list, ":"+state) {
				continue
			}
			n, err := rdb.LLen(context.Background(), list).Result()
			if err != nil {
				t.Fatalf("LLEN %s: %v", list, err)
			}
			out[list] = n
		}
		return out
	}
	for list, n := range lengths("pending") {
		if n != 1 {
			t.Errorf("list %s holds %d tasks after one enqueue per queue, want 1", list, n)
		}
	}

	// A server takes every task and holds it while the active lists are read.
	queues := map[string]int{}
	for _, stage := range pipeline.TaskStages {
		queues[pipeline.Queue(stage)] = 1
		queues[pipeline.BulkQueue(stage)] = 1
	}
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(len(queues))
	srv := asynq.NewServer(asynq.RedisClientOpt{Addr: addr}, asynq.Config{
		Concurrency: len(queues), Queues: queues, TaskCheckInterval: 10 * time.Millisecond,
		Logger: quietLogger{}, ShutdownTimeout: 5 * time.Second,
	})
	if err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		started.Done()
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	done := make(chan struct{})
	go func() { started.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not take every task within 30s")
	}
	active := lengths("active")
	close(release)
	if len(active) != len(queues) {
		t.Errorf("%d active-list triggers, want one per queue (%d)", len(active), len(queues))
	}
	for list, n := range active {
		if n != 1 {
			t.Errorf("list %s holds %d tasks while one task per queue runs, want 1", list, n)
		}
	}
}

// quietLogger drops asynq's log lines.
type quietLogger struct{}

func (quietLogger) Debug(...any) {}
func (quietLogger) Info(...any)  {}
func (quietLogger) Warn(...any)  {}
func (quietLogger) Error(...any) {}
func (quietLogger) Fatal(...any) {}
