package scheduler

import (
	"context"
	"slices"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/heartbeat"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/store"
)

// rescue finds items started by workers whose heartbeat is gone and whose
// task the queue still counts as running (a killed process holds its lease
// for another 30 s or more), and hands them to a new task generation. The
// old run, should it still be alive, can no longer close them.
func (r *Reconciler) rescue(ctx context.Context) (int, error) {
	claimed, err := r.Store.ClaimedItems(ctx, r.Only)
	if err != nil || len(claimed) == 0 {
		return 0, err
	}
	dead, err := r.deadWorkers(ctx, claimed)
	if err != nil || len(dead) == 0 {
		return 0, err
	}
	var suspects []store.Item
	for _, it := range claimed {
		if dead[it.WorkerID] {
			suspects = append(suspects, it)
		}
	}
	states, err := pipeline.TaskStates(ctx, r.Redis, suspects)
	if err != nil {
		return 0, err
	}
	var stuck []store.Item
	for i, it := range suspects {
		switch states[i] {
		case "active", "", "completed":
			stuck = append(stuck, it)
		}
		// pending, scheduled, retry: the queue runs it again by itself.
	}
	moved, err := r.Store.RescueItems(ctx, stuck)
	if err != nil {
		return 0, err
	}
	if len(moved) == 0 {
		return 0, nil
	}
	r.log().Warn("worker heartbeat gone: items handed to other workers", "items", len(moved), "workers", len(dead))
	return len(moved), r.Pipeline.Enqueue(ctx, moved)
}

// deadWorkers returns the workers of items whose heartbeat is missing
// twice, HeartbeatRecheck apart.
func (r *Reconciler) deadWorkers(ctx context.Context, items []store.Item) (map[string]bool, error) {
	var ids []string
	for _, it := range items {
		if !slices.Contains(ids, it.WorkerID) {
			ids = append(ids, it.WorkerID)
		}
	}
	missing := func(ids []string) ([]string, error) {
		alive, err := heartbeat.Alive(ctx, r.Redis, ids)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, id := range ids {
			if !alive[id] {
				out = append(out, id)
			}
		}
		return out, nil
	}
	gone, err := missing(ids)
	if err != nil || len(gone) == 0 {
		return nil, err
	}
	wait := r.HeartbeatRecheck
	if wait <= 0 {
		wait = 3 * time.Second
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(wait):
	}
	gone, err = missing(gone)
	if err != nil {
		return nil, err
	}
	dead := map[string]bool{}
	for _, id := range gone {
		dead[id] = true
	}
	return dead, nil
}
