package scheduler

import (
	"context"
	"slices"
	"time"

	"github.com/hibiken/asynq"

	"github.com/reviewfleet/reviewfleet/internal/heartbeat"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// rescue finds items started by workers whose heartbeat (their process's
// entry in asynq's server list) is gone and whose
// task the queue still counts as running (a killed process holds its lease
// for another 30 s or more), and hands them to a new task generation. The
// old run, should it still be alive, can no longer close them.
func (r *Reconciler) rescue(ctx context.Context) (int, error) {
	claimed, err := r.Store.ClaimedItems(ctx, r.Only)
	if err != nil || len(claimed) == 0 {
		return 0, err
	}
	if r.Inspector == nil {
		return 0, nil
	}
	dead, err := r.deadWorkers(ctx, claimed)
	if err != nil || len(dead) == 0 {
		return 0, err
	}
	var suspects []review.Item
	for _, it := range claimed {
		if dead[it.WorkerID] {
			suspects = append(suspects, it)
		}
	}
	states, err := pipeline.TaskStates(ctx, r.Redis, suspects)
	if err != nil {
		return 0, err
	}
	var stuck []review.Item
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
func (r *Reconciler) deadWorkers(ctx context.Context, items []review.Item) (map[string]bool, error) {
	var ids []string
	for _, it := range items {
		if !slices.Contains(ids, it.WorkerID) {
			ids = append(ids, it.WorkerID)
		}
	}
	missing := func(ids []string) ([]string, error) {
		alive, err := heartbeat.Alive(r.Inspector, ids)
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
		wait = DefaultHeartbeatRecheck
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

// DefaultHeartbeatRecheck is how long the rescues wait before reading a
// missing heartbeat or a stale lease again. asynq rewrites its server
// state and extends its leases every heartbeat.Interval (5 s), so after a
// Redis flush, which drops every server's state, a live worker is back on
// the list before the second read and is not taken for dead.
const DefaultHeartbeatRecheck = heartbeat.Interval + time.Second

// DefaultLeaseStaleAfter is how long a task's lease may go without being
// extended before the rescue takes its worker for dead. A live asynq
// server extends every lease every 5 s, so this allows one missed
// extension; it matches the heartbeat's TTL, so both rescues keep the
// same bound.
const DefaultLeaseStaleAfter = 10 * time.Second

// rescueUnleased finds tasks that a worker took off a queue and then
// stopped extending the lease of, and hands their items to a new task
// generation. They are the tasks the heartbeat rescue cannot see: a
// worker killed between taking a task and claiming its item left no
// worker on the item's row. Without this, asynq would hand such a task
// out again only after its 30 s lease ran out and a recoverer's sweep
// (every minute) found it. A lease is read twice, HeartbeatRecheck apart,
// and only one nobody extended in between counts.
func (r *Reconciler) rescueUnleased(ctx context.Context) (int, error) {
	if r.Inspector == nil || r.Redis == nil {
		return 0, nil
	}
	staleAfter := r.LeaseStaleAfter
	if staleAfter <= 0 {
		staleAfter = DefaultLeaseStaleAfter
	}
	first, err := pipeline.StaleLeases(ctx, r.Redis, staleAfter)
	if err != nil || len(first) == 0 {
		return 0, err
	}
	wait := r.HeartbeatRecheck
	if wait <= 0 {
		// A flush drops the lease sets with the tasks: nothing to wait
		// out, only a lease about to be extended.
		wait = 3 * time.Second
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(wait):
	}
	again, err := pipeline.StaleLeases(ctx, r.Redis, staleAfter)
	if err != nil {
		return 0, err
	}
	var stuck []review.Item
	for _, l := range first {
		if !slices.Contains(again, l) {
			continue // extended meanwhile, or the task ended
		}
		it, ok := r.leasedItem(ctx, l)
		if ok {
			stuck = append(stuck, it)
		}
	}
	moved, err := r.Store.RescueItems(ctx, stuck)
	if err != nil || len(moved) == 0 {
		return 0, err
	}
	r.log().Warn("tasks whose lease went stale: items handed to other workers", "items", len(moved))
	return len(moved), r.Pipeline.Enqueue(ctx, moved)
}

// leasedItem is the ledger item of a task with a stale lease, when it is
// still pending at the task's generation in a running review.
func (r *Reconciler) leasedItem(ctx context.Context, l pipeline.StaleLease) (review.Item, bool) {
	info, err := r.Inspector.GetTaskInfo(l.Queue, l.TaskID)
	if err != nil {
		return review.Item{}, false
	}
	p, err := pipeline.DecodePayload(asynq.NewTask(info.Type, info.Payload))
	if err != nil || (r.Only != "" && p.ReviewID != r.Only) {
		return review.Item{}, false
	}
	it, err := r.Store.GetItem(ctx, p.ReviewID, p.Stage, p.Item)
	if err != nil || it.Status != review.ItemPending || it.Generation != p.Gen {
		return review.Item{}, false
	}
	rv, err := r.Store.GetReview(ctx, p.ReviewID)
	if err != nil || rv.Status != review.ReviewRunning || rv.Stage != p.Stage {
		return review.Item{}, false
	}
	it.Bulk = p.Bulk
	return it, true
}
