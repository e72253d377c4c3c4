package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// taskKey is where asynq keeps a task: the hash "asynq:{<queue>}:t:<id>"
// with its state in the field "state" (asynq's internal base.TaskKey; kept
// in step by TestTaskStatesMatchAsynq).
func taskKey(it review.Item) string {
	return "asynq:{" + QueueFor(it.Stage, it.Bulk) + "}:t:" + GenTaskID(it.ReviewID, it.Stage, it.Key, it.Generation)
}

// TaskStates returns the asynq state of each item's current task
// ("pending", "active", "scheduled", "retry", "archived", "completed", or ""
// when the queue does not hold it), in one round trip for all of them.
func TaskStates(ctx context.Context, rdb redis.UniversalClient, items []review.Item) ([]string, error) {
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

// leaseKey is where asynq keeps the leases of a queue's active tasks: the
// sorted set "asynq:{<queue>}:lease", task ID scored by the Unix second
// the lease runs out (asynq's internal base.LeaseKey). A live server
// extends each lease every few seconds to LeaseDuration from then.
func leaseKey(queue string) string { return "asynq:{" + queue + "}:lease" }

// LeaseDuration is how far ahead a live asynq server keeps extending the
// leases of the tasks it runs (asynq's rdb.LeaseDuration).
const LeaseDuration = 30 * time.Second

// StaleLease is an active task whose lease nobody extended for a while:
// the worker that took it off the queue stopped (or froze) before it could
// claim the item, and asynq would hand it out again only after the lease
// ran out and its recoverer's next minute-long sweep.
type StaleLease struct {
	Queue, TaskID string
	// Expires is the lease's expiry as recorded: comparing two reads
	// tells whether anyone extended it in between.
	Expires int64
}

// StaleLeases returns the active tasks of every queue whose lease was last
// extended more than staleAfter ago, in one round trip.
func StaleLeases(ctx context.Context, rdb redis.UniversalClient, staleAfter time.Duration) ([]StaleLease, error) {
	queues := make([]string, 0, len(QueueWeights()))
	for q := range QueueWeights() {
		queues = append(queues, q)
	}
	slices.Sort(queues)
	max := strconv.FormatInt(time.Now().Add(LeaseDuration-staleAfter).Unix(), 10)
	pipe := rdb.Pipeline()
	cmds := make([]*redis.ZSliceCmd, len(queues))
	for i, q := range queues {
		cmds[i] = pipe.ZRangeByScoreWithScores(ctx, leaseKey(q), &redis.ZRangeBy{Min: "-inf", Max: max})
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return nil, fmt.Errorf("read the leases of %d queues: %w", len(queues), err)
	}
	var out []StaleLease
	for i, c := range cmds {
		for _, z := range c.Val() {
			id, _ := z.Member.(string)
			out = append(out, StaleLease{Queue: queues[i], TaskID: id, Expires: int64(z.Score)})
		}
	}
	return out, nil
}
