package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"

	"github.com/reviewfleet/reviewfleet/store"
)

// Work does one ledger item's work and records its result through the
// store (closing the item). Returning an error leaves the item pending.
type Work func(ctx context.Context, p Payload) error

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

// Handler adapts a stage's Work to an asynq handler with the rules every
// stage shares: payloads that do not decode fail permanently; a closed item
// (duplicate delivery) does nothing but nudge the review forward; a
// permanent error, or the last retry, fails the item with its reason and the
// review goes on; anything else is retried.
//
// isRetryable errors (rate limits) are returned as they are, so the
// server's IsFailure can keep them from counting as failures.
func (p *Pipeline) Handler(work Work, isRetryable func(error) bool) asynq.HandlerFunc {
	return p.WorkerHandler("", work, isRetryable)
}

// WorkerHandler is Handler for the worker workerID: each run claims its
// item for that worker (so the scheduler can hand it to another worker when
// this one's heartbeat stops), and only the run holding the claim can close
// the item. A task of an item's older generation does nothing.
func (p *Pipeline) WorkerHandler(workerID string, work Work, isRetryable func(error) bool) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		pl, err := DecodePayload(t)
		if err != nil {
			return err
		}
		it, err := p.Store.GetItem(ctx, pl.ReviewID, pl.Stage, pl.Item)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%v: %w", err, asynq.SkipRetry)
		}
		if err != nil {
			return err
		}
		if it.Status != store.ItemPending {
			return p.AfterItem(ctx, pl.ReviewID)
		}
		if it.Generation != pl.Gen {
			return nil // a stale task: the item was handed to a newer one
		}
		if r, err := p.Store.GetReview(ctx, pl.ReviewID); err != nil {
			return err
		} else if r.Status != store.StatusRunning {
			return nil // the review ended (failed or timed out): nothing to do
		}
		claim, err := p.Store.ClaimItem(ctx, pl.ReviewID, pl.Stage, pl.Item, workerID, pl.Gen)
		switch {
		case errors.Is(err, store.ErrStaleTask):
			return nil // the item was handed to a newer task
		case errors.Is(err, store.ErrItemClosed):
			return p.AfterItem(ctx, pl.ReviewID)
		case err != nil:
			return err
		}
		ctx = store.WithClaim(ctx, claim)
		werr := work(ctx, pl)
		// The bookkeeping after the work must happen even when the task's
		// own deadline is what ended the work.
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		switch {
		case werr == nil, errors.Is(werr, store.ErrItemClosed):
			return p.AfterItem(bctx, pl.ReviewID)
		case errors.Is(werr, ErrPermanent) || LastAttempt(ctx):
			// On the last attempt even a rate limit fails the item: asynq
			// would archive the task and nothing would run it again.
			if err := p.Store.FailItem(bctx, pl.ReviewID, pl.Stage, pl.Item, werr.Error()); err != nil && !errors.Is(err, store.ErrItemClosed) {
				return err
			}
			p.log().Warn("item failed", "review", pl.ReviewID, "stage", pl.Stage, "item", pl.Item, "err", werr)
			return p.AfterItem(bctx, pl.ReviewID)
		case isRetryable != nil && isRetryable(werr):
			return werr
		default:
			return werr
		}
	}
}

// LastAttempt reports whether the task being handled will not be retried
// after this attempt.
func LastAttempt(ctx context.Context) bool {
	n, ok1 := asynq.GetRetryCount(ctx)
	max, ok2 := asynq.GetMaxRetry(ctx)
	return ok1 && ok2 && n >= max
}
