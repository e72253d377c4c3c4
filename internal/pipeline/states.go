package pipeline

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/reviewfleet/reviewfleet/store"
)

// taskKey is where asynq keeps a task: the hash "asynq:{<queue>}:t:<id>"
// with its state in the field "state" (asynq's internal base.TaskKey; kept
// in step by TestTaskStatesMatchAsynq).
func taskKey(it store.Item) string {
	return "asynq:{" + QueueFor(it.Stage, it.Bulk) + "}:t:" + GenTaskID(it.ReviewID, it.Stage, it.Key, it.Generation)
}

// TaskStates returns the asynq state of each item's current task
// ("pending", "active", "scheduled", "retry", "archived", "completed", or ""
// when the queue does not hold it), in one round trip for all of them.
func TaskStates(ctx context.Context, rdb redis.UniversalClient, items []store.Item) ([]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	pipe := rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(items))
	for i, it := range items {
		cmds[i] = pipe.HGet(ctx, taskKey(it), "state")
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return nil, fmt.Errorf("read the state of %d tasks: %w", len(items), err)
	}
	out := make([]string, len(items))
	for i, c := range cmds {
		out[i] = c.Val() // "" for redis.Nil
	}
	return out, nil
}
