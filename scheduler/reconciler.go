// Package scheduler runs the reconciler, the fleet's safety net: it
// re-enqueues ledger items that Postgres says are pending but that no queue
// holds (Redis restarted or flushed, an enqueue failed after commit), moves
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

	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/store"
)

// Inspector is the part of asynq's inspector the reconciler needs.
type Inspector interface {
	GetTaskInfo(queue, id string) (*asynq.TaskInfo, error)
	DeleteTask(queue, id string) error
}

// Reconciler repairs the gap between the ledger and the queues.
type Reconciler struct {
	Store     *store.Store
	Pipeline  *pipeline.Pipeline
	Inspector Inspector
	// RequeueAfter: pending items enqueued longer ago than this are checked
	// against the queues (and items never enqueued are enqueued).
	RequeueAfter time.Duration
	// OnFailed is called for each review failed for passing its deadline
	// (e.g. to store a report saying why); may be nil.
	OnFailed func(ctx context.Context, reviewID string)
	// Only, when set, restricts the reconciler to one review: the
	// in-process fleet of a single `review` command must not adopt the
	// rest of a shared database's reviews.
	Only string
	Log  *slog.Logger
}

// Stats counts what one pass did.
type Stats struct {
	Requeued, Refreshed, Advanced, Expired, Admitted int
	// Archived counts archived tasks of pending items, run again.
	Archived int
}

// RunOnce makes one pass.
func (r *Reconciler) RunOnce(ctx context.Context) (Stats, error) {
	var st Stats
	var errs []error

	expired, err := r.Store.FailExpiredReviews(ctx, r.Only)
	errs = append(errs, err)
	st.Expired = len(expired)
	for _, id := range expired {
		r.log().Warn("review failed: deadline passed", "review", id)
		if r.OnFailed != nil {
			r.OnFailed(ctx, id)
		}
	}

	stalled, err := r.Store.StalledReviews(ctx, time.Second, r.Only)
	errs = append(errs, err)
	for _, s := range stalled {
		if err := r.Pipeline.AfterItem(ctx, s.ID); err != nil {
			errs = append(errs, fmt.Errorf("advance stalled review %s: %w", s.ID, err))
			continue
		}
		st.Advanced++
	}

	items, err := r.Store.PendingItems(ctx, r.RequeueAfter, 1000, r.Only)
	errs = append(errs, err)
	var requeue []store.Item
	for _, it := range items {
		info, err := r.Inspector.GetTaskInfo(pipeline.QueueFor(it.Stage, it.Bulk), pipeline.TaskID(it.ReviewID, it.Stage, it.Key))
		switch {
		case errors.Is(err, asynq.ErrTaskNotFound) || errors.Is(err, asynq.ErrQueueNotFound):
			requeue = append(requeue, it)
		case err != nil:
			errs = append(errs, fmt.Errorf("inspect task of %s/%s: %w", it.Stage, it.Key, err))
		case info.State == asynq.TaskStateArchived:
			// The queue gave the task up while the ledger still says
			// pending: the handler did not fail the item, so it was not the
			// item's fault (asynq's lease lost on the last attempt, a
			// cancellation). Run it again; the review's deadline bounds it.
			if err := r.Inspector.DeleteTask(pipeline.Queue(it.Stage), pipeline.TaskID(it.ReviewID, it.Stage, it.Key)); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) {
				errs = append(errs, fmt.Errorf("delete archived task of %s/%s: %w", it.Stage, it.Key, err))
				continue
			}
			st.Archived++
			requeue = append(requeue, it)
		case info.State == asynq.TaskStateCompleted:
			// Finished but the ledger still says pending: its handler died
			// before writing. Run it again.
			requeue = append(requeue, it)
		default: // pending, active, scheduled, retry: the queue has it
			errs = append(errs, r.Store.MarkEnqueued(ctx, it.ReviewID, it.Stage, []string{it.Key}))
			st.Refreshed++
		}
	}
	if len(requeue) > 0 {
		if err := r.Pipeline.Enqueue(ctx, requeue); err != nil {
			errs = append(errs, err)
		}
		st.Requeued = len(requeue)
		r.log().Info("re-enqueued pending items", "count", len(requeue))
	}
	// Reviews ended by the deadline or a cancelled batch free their
	// places; an admission that failed in a handler is retried here.
	admitted, err := r.Pipeline.Admit(ctx)
	errs = append(errs, err)
	st.Admitted = admitted
	return st, errors.Join(errs...)
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
