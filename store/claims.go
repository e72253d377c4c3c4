package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
)

// ErrClaimLost is returned when a run tries to close an item that was
// handed to a newer run (its worker's heartbeat had gone): the newer run's
// result counts, the stale one is dropped. It is a kind of ErrItemClosed.
var ErrClaimLost = fmt.Errorf("%w: claimed by a newer run", ErrItemClosed)

// ErrStaleTask is returned by ClaimItem for a task of an older generation
// than the item's: the item was handed to another task meanwhile.
var ErrStaleTask = errors.New("task superseded by a newer generation")

type claimKey struct{}

// WithClaim returns ctx carrying a run's claim: every store write that
// closes an item then succeeds only while the claim is still the item's.
func WithClaim(ctx context.Context, claim string) context.Context {
	return context.WithValue(ctx, claimKey{}, claim)
}

func claimFrom(ctx context.Context) (string, bool) {
	c, ok := ctx.Value(claimKey{}).(string)
	return c, ok && c != ""
}

// lostOrClosed tells why a claim-checked close matched no row.
func lostOrClosed(ctx context.Context, tx pgx.Tx, reviewID string, stage review.Stage, key string) error {
	status, err := sqlcdb.New(tx).ItemStatus(ctx, sqlcdb.ItemStatusParams{ReviewID: reviewID, Stage: stage, ItemKey: key})
	if err == nil && status == review.ItemPending {
		return ErrClaimLost
	}
	return ErrItemClosed
}

// Item progress: the writes a run of an item makes before it closes — its
// claim, the packs its intent prompt used, the budget its calls reserve,
// and each call's record as it starts and ends — commit without waiting
// for the WAL to reach disk (each of those queries turns synchronous_commit
// off for its own transaction, in a CTE named progress). The item's close commits synchronously, and a
// synchronous commit flushes the whole WAL before it, so when the item
// closes all of its progress is durable with its result. A PostgreSQL crash
// before then loses at most the last fraction of a second of the progress
// of items still open, which run again (they are still pending): their
// calls' records and reservations may be missing, nothing else. A worker
// killed mid-item loses nothing: the server has its commits. Waiting for
// the flush on each of these writes cost a worker about 4.5 ms per call.

// ClaimItem starts a run of a pending item on workerID: one more attempt,
// the worker recorded, and a fresh claim returned for WithClaim. A
// generation of -1 skips the generation check; a task whose generation is
// not the item's gets ErrStaleTask, a closed item ErrItemClosed.
func (s *Store) ClaimItem(ctx context.Context, reviewID string, stage review.Stage, key, workerID string, generation int) (string, error) {
	return s.ClaimItemQueued(ctx, reviewID, stage, key, workerID, generation, time.Time{})
}

// ClaimItemQueued is ClaimItem for a task handed to the queue at queuedAt
// (zero: unknown), which it records with the start time so that the hop
// from queue to handler can be read back.
func (s *Store) ClaimItemQueued(ctx context.Context, reviewID string, stage review.Stage, key, workerID string, generation int, queuedAt time.Time) (string, error) {
	return s.ClaimItemAttempt(ctx, reviewID, stage, key, workerID, generation, queuedAt, 0)
}

// ClaimItemAttempt is ClaimItemQueued for the task's attempt-th counted
// attempt (from 1; 0: unknown, one more than before). Claims are counted
// apart: a run that an outage, a shutdown or a rescue took back is a
// claim but no attempt, even when giving it back never reached the
// database. Calls of the item's earlier runs still marked started never
// finished: they are closed as abandoned.
func (s *Store) ClaimItemAttempt(ctx context.Context, reviewID string, stage review.Stage, key, workerID string, generation int, queuedAt time.Time, attempt int) (string, error) {
	claim := uuid.NewString()
	r, err := s.q.ClaimItem(ctx, sqlcdb.ClaimItemParams{
		ReviewID: reviewID, Stage: stage, ItemKey: key, WorkerID: workerID, Claim: &claim,
		Generation: int32(max(min(generation, math.MaxInt32), -1)), QueuedAt: nonZero(queuedAt),
		Attempt: int32(max(min(attempt, math.MaxInt32), 0)),
	})
	switch {
	case err != nil:
		return "", fmt.Errorf("claim item %s/%s: %w", stage, key, err)
	case r.Claimed:
		return claim, nil
	case r.Status == "":
		return "", fmt.Errorf("claim item %s/%s of %s: %w", stage, key, reviewID, ErrNotFound)
	case review.ItemStatus(r.Status) != review.ItemPending:
		return "", ErrItemClosed
	}
	return "", ErrStaleTask
}

// ClaimedItems returns the pending items of running reviews, in the
// review's current stage, that a worker has started (only one review when
// only is not empty): the candidates for a rescue when their worker dies.
func (s *Store) ClaimedItems(ctx context.Context, only string) ([]review.Item, error) {
	rows, err := s.q.ClaimedItems(ctx, only)
	if err != nil {
		return nil, fmt.Errorf("list claimed items: %w", err)
	}
	var out []review.Item
	for _, r := range rows {
		out = append(out, review.Item{Status: review.ItemPending, ReviewID: r.ReviewID, Stage: r.Stage, Key: r.ItemKey,
			Generation: int(r.Generation), WorkerID: orEmpty(r.WorkerID), Bulk: r.Bulk})
	}
	return out, nil
}

// RescueItems hands items over to a new task generation: for each item
// still pending and still claimed by the worker (or, when the item has no
// worker, still at the generation given) the generation goes up and the
// claim is cleared, so the old run can no longer close it and the old
// task's next delivery does nothing. It returns the items it moved, with
// their new generation.
func (s *Store) RescueItems(ctx context.Context, items []review.Item) ([]review.Item, error) {
	var out []review.Item
	// One transaction locks the items one by one: in key order, as every
	// multi-row update does, or two rescues of the same items deadlock.
	items = slices.Clone(items)
	sortItems(items)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		for _, it := range items {
			gen, err := q.RescueItem(ctx, sqlcdb.RescueItemParams{ReviewID: it.ReviewID, Stage: it.Stage,
				ItemKey: it.Key, WorkerID: it.WorkerID, Generation: int32(min(it.Generation, math.MaxInt32))})
			if errors.Is(err, pgx.ErrNoRows) {
				continue // closed or claimed again meanwhile
			}
			if err != nil {
				return fmt.Errorf("rescue item %s/%s: %w", it.Stage, it.Key, err)
			}
			it.Generation, it.WorkerID = int(gen), ""
			out = append(out, it)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
