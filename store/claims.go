package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/reviewfleet/reviewfleet/internal/review"
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

func claimOrNil(c string) any {
	if c == "" {
		return nil
	}
	return c
}

// lostOrClosed tells why a claim-checked close matched no row.
func lostOrClosed(ctx context.Context, tx pgx.Tx, reviewID string, stage review.Stage, key string) error {
	var status review.ItemStatus
	err := tx.QueryRow(ctx, `SELECT status FROM stage_items WHERE review_id = $1 AND stage = $2 AND item_key = $3`,
		reviewID, string(stage), key).Scan(&status)
	if err == nil && status == review.ItemPending {
		return ErrClaimLost
	}
	return ErrItemClosed
}

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
	var tag pgconn.CommandTag
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		tag, err = tx.Exec(ctx, `
			UPDATE stage_items SET claims = claims + 1,
			       attempts = CASE WHEN $8 > 0 THEN greatest(attempts, $8) ELSE attempts + 1 END,
			       updated_at = now(), started_at = now(),
			       queued_at = $7, worker_id = nullif($4, ''), claim = $5, claimed_at = now()
			WHERE review_id = $1 AND stage = $2 AND item_key = $3 AND status = 'pending'
			  AND ($6 < 0 OR generation = $6)`,
			reviewID, string(stage), key, workerID, claim, generation, nullableTime(queuedAt), attempt)
		if err != nil || tag.RowsAffected() != 1 {
			return err
		}
		_, err = tx.Exec(ctx, `
			WITH target AS (
			    SELECT id FROM llm_calls
			    WHERE review_id = $1 AND stage = $2 AND item_key = $3 AND status = 'started'
			    ORDER BY id FOR UPDATE)
			UPDATE llm_calls c SET status = 'abandoned', error = 'the run that sent it ended before the reply was recorded'
			FROM target t
			WHERE c.id = t.id AND c.status = 'started'`,
			reviewID, string(stage), key)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("claim item %s/%s: %w", stage, key, err)
	}
	if tag.RowsAffected() == 1 {
		return claim, nil
	}
	it, err := s.GetItem(ctx, reviewID, stage, key)
	if err != nil {
		return "", err
	}
	if it.Status != review.ItemPending {
		return "", ErrItemClosed
	}
	return "", ErrStaleTask
}

// ClaimedItems returns the pending items of running reviews, in the
// review's current stage, that a worker has started (only one review when
// only is not empty): the candidates for a rescue when their worker dies.
func (s *Store) ClaimedItems(ctx context.Context, only string) ([]review.Item, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT i.review_id, i.stage, i.item_key, i.generation, i.worker_id, r.kind = 'bulk'
		FROM stage_items i JOIN reviews r ON r.id = i.review_id
		WHERE i.status = 'pending' AND i.worker_id IS NOT NULL
		  AND r.status = 'running' AND r.stage = i.stage
		  AND ($1 = '' OR i.review_id::text = $1)`, only)
	if err != nil {
		return nil, fmt.Errorf("list claimed items: %w", err)
	}
	defer rows.Close()
	var out []review.Item
	for rows.Next() {
		it := review.Item{Status: review.ItemPending}
		var stage string
		if err := rows.Scan(&it.ReviewID, &stage, &it.Key, &it.Generation, &it.WorkerID, &it.Bulk); err != nil {
			return nil, err
		}
		it.Stage = review.Stage(stage)
		out = append(out, it)
	}
	return out, rows.Err()
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
		for _, it := range items {
			var gen int
			err := tx.QueryRow(ctx, `
				UPDATE stage_items SET generation = generation + 1, worker_id = NULL, claim = NULL,
				       claimed_at = NULL, enqueued_at = NULL, updated_at = now()
				WHERE review_id = $1 AND stage = $2 AND item_key = $3 AND status = 'pending'
				  AND coalesce(worker_id, '') = $4 AND generation = $5
				RETURNING generation`, it.ReviewID, string(it.Stage), it.Key, it.WorkerID, it.Generation).Scan(&gen)
			if errors.Is(err, pgx.ErrNoRows) {
				continue // closed or claimed again meanwhile
			}
			if err != nil {
				return fmt.Errorf("rescue item %s/%s: %w", it.Stage, it.Key, err)
			}
			it.Generation, it.WorkerID = gen, ""
			out = append(out, it)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
