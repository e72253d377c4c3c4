// Package scheduler runs the reconciler, the fleet's safety net: it
// re-enqueues ledger items that Postgres says are pending but that no queue
// holds (Redis restarted or flushed, an enqueue failed after commit), hands
// the items of a dead worker (its heartbeat gone) to other workers, moves
// on reviews whose last handler died between finishing its item and
// advancing, and fails reviews stalled past their deadline, with the reason.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/reviewfleet/reviewfleet/internal/metrics"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// Inspector is the part of asynq's inspector the reconciler needs: the
// tasks of stale leases and the server list that is the workers'
// heartbeat.
type Inspector interface {
	GetTaskInfo(queue, id string) (*asynq.TaskInfo, error)
	Servers() ([]*asynq.ServerInfo, error)
}

// LeaderLock names the advisory lock that keeps one reconciler active
// among scheduler replicas.
const LeaderLock = "reviewfleet:reconciler"

// Reconciler repairs the gap between the ledger and the queues.
type Reconciler struct {
	Store     *store.Store
	Pipeline  *pipeline.Pipeline
	Inspector Inspector
	// Redis is the queues' server: task states are read from it in
	// pipelines, one round trip per batch.
	Redis redis.UniversalClient
	// RequeueAfter: pending items enqueued longer ago than this are checked
	// against the queues (and items never enqueued are enqueued).
	RequeueAfter time.Duration
	// BatchSize is the page size of the ledger scan (default 2000).
	BatchSize int
	// HeartbeatRecheck is how long to wait before checking a missing
	// heartbeat or a stale lease again, so a Redis flush (which drops
	// every heartbeat until the servers' next beat) does not look like a
	// dead fleet (default DefaultHeartbeatRecheck).
	HeartbeatRecheck time.Duration
	// StallGrace is how long a stage with no pending item may go without
	// advancing before the reconciler advances it, so a worker that is
	// about to advance it itself is not raced (default 1s).
	StallGrace time.Duration
	// LeaseStaleAfter is how long an active task's queue lease may go
	// unextended before its worker is taken for dead (default
	// DefaultLeaseStaleAfter).
	LeaseStaleAfter time.Duration
	// OnFailed is called for each review failed for passing its deadline
	// (e.g. to store a report saying why); may be nil.
	OnFailed func(ctx context.Context, reviewID string)
	// Only, when set, restricts the reconciler to one review: the
	// in-process fleet of a single `review` command must not adopt the
	// rest of a shared database's reviews. It also skips the leader lock.
	Only string
	Log  *slog.Logger
}

// Stats counts what one pass did.
type Stats struct {
	Requeued, Refreshed, Advanced, Expired, Rescued, Admitted int
	// Archived counts archived tasks of pending items, run again.
	Archived int
	// Follower is true when another reconciler held the leader lock and
	// this pass did nothing.
	Follower bool
}

// RunOnce makes one pass, unless another reconciler is making one.
func (r *Reconciler) RunOnce(ctx context.Context) (Stats, error) {
	if r.Only == "" {
		release, ok, err := r.Store.TryLeader(ctx, LeaderLock)
		if err != nil {
			return Stats{}, err
		}
		if !ok {
			return Stats{Follower: true}, nil
		}
		defer release()
	}
	var st Stats
	var errs []error

	expired, err := r.Store.FailExpiredReviews(ctx, r.Only)
	errs = append(errs, err)
	st.Expired = len(expired)
	metrics.ReviewsFinished.WithLabelValues(string(review.ReviewFailed)).Add(float64(len(expired)))
	for _, id := range expired {
		r.log().Warn("review failed: deadline passed", "review", id)
		if r.OnFailed != nil {
			r.OnFailed(ctx, id)
		}
	}

	grace := r.StallGrace
	if grace <= 0 {
		grace = time.Second
	}
	stalled, err := r.Store.StalledReviews(ctx, grace, r.Only)
	errs = append(errs, err)
	for _, s := range stalled {
		if err := r.Pipeline.AfterItem(ctx, s.ID); err != nil {
			errs = append(errs, fmt.Errorf("advance stalled review %s: %w", s.ID, err))
			continue
		}
		st.Advanced++
		metrics.ReconcilerRestored.WithLabelValues("stalled_review").Inc()
	}

	n, err := r.rescue(ctx)
	st.Rescued = n
	metrics.ReconcilerRestored.WithLabelValues("dead_worker").Add(float64(n))
	errs = append(errs, err)
	n, err = r.rescueUnleased(ctx)
	st.Rescued += n
	metrics.ReconcilerRestored.WithLabelValues("stale_lease").Add(float64(n))
	errs = append(errs, err)
	errs = append(errs, r.restore(ctx, &st))
	// Reviews ended by the deadline or a cancelled batch free their
	// places; an admission that failed in a handler is retried here.
	admitted, err := r.Pipeline.Admit(ctx)
	errs = append(errs, err)
	st.Admitted = admitted
	return st, errors.Join(errs...)
}

// restore pages through the pending items and puts back those no queue
// holds: one query, one Redis pipeline and one batch of enqueues per page.
func (r *Reconciler) restore(ctx context.Context, st *Stats) error {
	size := r.BatchSize
	if size <= 0 {
		size = 2000
	}
	var errs []error
	var cur store.PendingCursor
	for {
		page, err := r.Store.PendingPage(ctx, cur, r.RequeueAfter, size, r.Only)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		if len(page) == 0 {
			break
		}
		errs = append(errs, r.restorePage(ctx, page, st))
		if len(page) < size || ctx.Err() != nil {
			break
		}
		cur = store.After(page[len(page)-1])
	}
	if st.Requeued > 0 {
		r.log().Info("re-enqueued pending items", "count", st.Requeued)
	}
	return errors.Join(errs...)
}

func (r *Reconciler) restorePage(ctx context.Context, page []review.Item, st *Stats) error {
	states, err := pipeline.TaskStates(ctx, r.Redis, page)
	if err != nil {
		return err
	}
	var errs []error
	var requeue, refreshed, reissue []review.Item
	for i, it := range page {
		switch states[i] {
		case "":
			requeue = append(requeue, it)
			metrics.ReconcilerRestored.WithLabelValues("missing").Inc()
		case "completed":
			// Finished but the ledger still says pending: its handler died
			// before writing. The finished task keeps its ID, so run the
			// item under a new generation.
			reissue = append(reissue, it)
			metrics.ReconcilerRestored.WithLabelValues("completed").Inc()
		case "archived":
			// The queue gave the task up while the ledger still says
			// pending: the handler did not fail the item, so it was not the
			// item's fault (asynq's lease lost on the last attempt, a
			// cancellation). Run it again under a new generation; the
			// review's deadline bounds it.
			reissue = append(reissue, it)
			st.Archived++
			metrics.ReconcilerRestored.WithLabelValues("archived").Inc()
		default: // pending, active, scheduled, retry, aggregating: the queue has it
			refreshed = append(refreshed, it)
		}
	}
	if len(reissue) > 0 {
		moved, err := r.Store.RescueItems(ctx, reissue)
		errs = append(errs, err)
		requeue = append(requeue, moved...)
	}
	if len(requeue) > 0 {
		errs = append(errs, r.Pipeline.Enqueue(ctx, requeue))
		st.Requeued += len(requeue)
	}
	errs = append(errs, r.Store.MarkItemsEnqueued(ctx, refreshed))
	st.Refreshed += len(refreshed)
	return errors.Join(errs...)
}

// Run makes a pass every interval until ctx is cancelled.
func (r *Reconciler) Run(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := r.RunOnce(ctx); err != nil && ctx.Err() == nil {
			r.log().Warn("reconcile", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (r *Reconciler) log() *slog.Logger {
	if r.Log == nil {
		return slog.Default()
	}
	return r.Log
}
