package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"github.com/reviewfleet/reviewfleet/internal/llm"
	"github.com/reviewfleet/reviewfleet/internal/metrics"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// ErrPermanent marks an error that retrying cannot fix (a reply that stays
// invalid after the repair attempt, an exhausted budget, a missing file):
// the item is failed at once with the reason.
var ErrPermanent = errors.New("permanent failure")

// Permanent wraps err as a permanent failure.
func Permanent(err error) error { return fmt.Errorf("%w: %w", ErrPermanent, err) }

// PermanentIfMissing makes a lookup error permanent when what was looked
// up does not exist; any other error (a connection blip) stays retryable.
func PermanentIfMissing(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return Permanent(err)
	}
	return err
}

// Handler adapts a task step's handler to an asynq handler with the rules every
// stage shares: payloads that do not decode fail permanently; a closed item
// (duplicate delivery) does nothing but nudge the review forward; what
// Classify calls the item's own fault fails the item — at once when
// permanent, on the last attempt otherwise — and the review goes on.
// Anything else (cancellation, shutdown, a lost lease, Postgres or Redis
// down, a rate limit) never fails the item: it goes back to pending
// without using an attempt and runs again.
func (p *Pipeline) Handler(h StageHandler) asynq.HandlerFunc {
	return p.WorkerHandler("", h)
}

// WorkerHandler is Handler for the worker workerID: each run claims its
// item for that worker (so the scheduler can hand it to another worker when
// this one's heartbeat stops), and only the run holding the claim can close
// or give back the item. A task of an item's older generation does nothing.
// A task given back during an outage runs again after a wait that doubles
// with each outage it meets in a row (OutageError).
// The step gets the review and item loaded here in its Job.
func (p *Pipeline) WorkerHandler(workerID string, h StageHandler) asynq.HandlerFunc {
	handle := p.handle(workerID, h)
	outages := &outageCounts{} // task IDs are unique, whichever stage's handler counts them
	return func(ctx context.Context, t *asynq.Task) error {
		err := handle(ctx, t)
		if err == nil && ctx.Err() == nil {
			// The slot this item held is free: fill it.
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			p.admitSoon(actx)
			cancel()
		}
		id, _ := asynq.GetTaskID(ctx)
		if Classify(err) != ClassInfra || ctx.Err() != nil {
			outages.forget(id)
			return err
		}
		// An outage uses no attempt, so asynq's own backoff, which counts
		// attempts, would run the task again every second for as long as
		// the outage lasts: back off on the outages this task met in a row.
		return &OutageError{Err: err, Wait: outages.next(id)}
	}
}

// OutageError is a task's error during an outage (Classify's ClassInfra)
// with the wait before its next run; RetryDelay honours it.
type OutageError struct {
	Err  error
	Wait time.Duration
}

func (e *OutageError) Error() string { return e.Err.Error() }
func (e *OutageError) Unwrap() error { return e.Err }

// MaxOutageWait caps the wait between runs of a task during an outage: an
// outage that ends is noticed within it.
const MaxOutageWait = 15 * time.Second

// outageCounts counts, per task, the outages met in a row by this process.
type outageCounts struct {
	mu sync.Mutex
	n  map[string]int
}

// next counts one more outage of task id and returns the wait before its
// next run: 1s, doubling, capped at MaxOutageWait.
func (o *outageCounts) next(id string) time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil || len(o.n) > 100000 {
		o.n = map[string]int{} // tasks that moved to other workers are forgotten
	}
	n := o.n[id]
	o.n[id] = n + 1
	return min(time.Second<<min(n, 5), MaxOutageWait)
}

func (o *outageCounts) forget(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.n, id)
}

// handle is WorkerHandler without the outage backoff.
func (p *Pipeline) handle(workerID string, h StageHandler) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		pl, err := DecodePayload(t)
		if err != nil {
			return err
		}
		stage := string(pl.Stage)
		if n, ok := asynq.GetRetryCount(ctx); ok && n == 0 {
			// Enqueue to first start; a retry's wait would count the
			// earlier attempts too.
			metrics.Since(metrics.QueueWait.WithLabelValues(stage), pl.Queued())
		}
		outcome := func(o string) { metrics.StageItems.WithLabelValues(stage, o).Inc() }
		it, err := p.Store.GetItem(ctx, pl.ReviewID, pl.Stage, pl.Item)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%v: %w", err, asynq.SkipRetry)
		}
		if err != nil {
			return err
		}
		if it.Status != review.ItemPending {
			outcome("duplicate")
			return p.AfterItem(ctx, pl.ReviewID)
		}
		if it.Generation != pl.Gen {
			outcome("stale")
			return nil // a stale task: the item was handed to a newer one
		}
		r, err := p.Store.GetReview(ctx, pl.ReviewID)
		if err != nil {
			return err
		}
		if r.Status != review.ReviewRunning {
			outcome("stale")
			return nil // the review ended (failed or timed out): nothing to do
		}
		attempt := 0
		if n, ok := asynq.GetRetryCount(ctx); ok {
			attempt = n + 1 // asynq counts only the runs IsFailure counted
		}
		claim, err := p.Store.ClaimItemAttempt(ctx, pl.ReviewID, pl.Stage, pl.Item, workerID, pl.Gen, pl.Queued(), attempt)
		switch {
		case errors.Is(err, store.ErrStaleTask):
			outcome("stale")
			return nil // the item was handed to a newer task
		case errors.Is(err, store.ErrItemClosed):
			outcome("duplicate")
			return p.AfterItem(ctx, pl.ReviewID)
		case err != nil:
			return err
		}
		ctx = store.WithClaim(ctx, claim)
		var known *review.Review // the review as loaded, for moving it on
		if r.Stage == pl.Stage {
			known = &r
		}
		started := time.Now()
		werr := h.Work(ctx, Job{Payload: pl, Review: r, Config: Settings(r), Item: it})
		metrics.Since(metrics.StageDuration.WithLabelValues(stage), started)
		// The bookkeeping after the work must happen even when the task's
		// own deadline, or a shutdown, is what ended the work.
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		class := Classify(werr)
		switch {
		case werr == nil:
		case errors.Is(ctx.Err(), context.Canceled):
			class = ClassInfra // whatever the work said, it was interrupted
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			// The task's own time ran out: the item took too long, which an
			// outage does not explain; it uses its attempt.
			class = ClassItem
		}
		last := LastAttempt(ctx)
		switch {
		case class == ClassNone:
			outcome("done")
			return p.afterItem(bctx, pl.ReviewID, known)
		case class == ClassPermanent && errors.Is(werr, llm.ErrBudgetExceeded):
			// The review's budget is spent: skip the item, the review
			// completes without it and its report says which setting to raise.
			outcome("skipped_budget")
			if err := p.Store.SkipItemBudget(bctx, pl.ReviewID, pl.Stage, pl.Item, werr.Error()); err != nil && !errors.Is(err, store.ErrItemClosed) {
				return err
			}
			p.log().Warn("item skipped: LLM budget spent", "review", pl.ReviewID, "stage", pl.Stage, "item", pl.Item, "err", werr)
			return p.afterItem(bctx, pl.ReviewID, known)
		case class == ClassPermanent, class == ClassItem && last:
			outcome("failed")
			if err := p.Store.FailItem(bctx, pl.ReviewID, pl.Stage, pl.Item, werr.Error()); err != nil && !errors.Is(err, store.ErrItemClosed) {
				return err
			}
			p.log().Warn("item failed", "review", pl.ReviewID, "stage", pl.Stage, "item", pl.Item, "class", class, "err", werr)
			return p.afterItem(bctx, pl.ReviewID, known)
		case class == ClassItem:
			outcome("retry")
			return werr
		}
		// Not the item's fault. On the last attempt asynq would archive the
		// task: revoke it instead and let the reconciler enqueue it again.
		outcome("given_back")
		if err := p.Store.ReturnItem(bctx, pl.ReviewID, pl.Stage, pl.Item, werr.Error(), last); err != nil && !errors.Is(err, store.ErrItemClosed) {
			p.log().Warn("return item", "review", pl.ReviewID, "stage", pl.Stage, "item", pl.Item, "err", err)
		}
		p.log().Info("item given back", "review", pl.ReviewID, "stage", pl.Stage, "item", pl.Item, "class", class, "err", werr)
		if last {
			return fmt.Errorf("%v: %w", werr, asynq.RevokeTask)
		}
		return werr
	}
}

// LastAttempt reports whether the task being handled will not be retried
// after this attempt.
func LastAttempt(ctx context.Context) bool {
	n, ok1 := asynq.GetRetryCount(ctx)
	max, ok2 := asynq.GetMaxRetry(ctx)
	return ok1 && ok2 && n >= max
}
