package deploy

import (
	"context"
	"os"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"gopkg.in/yaml.v3"

	"github.com/reviewfleet/reviewfleet/internal/localenv"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
)

// TestScaledObjectListsHoldPendingTasks enqueues one task per review queue
// with asynq and checks that each Redis list the KEDA ScaledObject watches
// then holds exactly one task, so a change of asynq's key layout or of the
// queue names cannot silently stop the autoscaling.
func TestScaledObjectListsHoldPendingTasks(t *testing.T) {
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
	if len(so.Spec.Triggers) != 2*len(pipeline.TaskStages) {
		t.Fatalf("%d triggers for %d task stages, each with an interactive and a bulk queue", len(so.Spec.Triggers), len(pipeline.TaskStages))
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
	for _, tr := range so.Spec.Triggers {
		list := tr.Metadata["listName"]
		n, err := rdb.LLen(context.Background(), list).Result()
		if err != nil {
			t.Fatalf("LLEN %s: %v", list, err)
		}
		if n != 1 {
			t.Errorf("list %s holds %d tasks after one enqueue per queue, want 1", list, n)
		}
	}
}
