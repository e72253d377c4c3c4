package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// admissionLock is the key of the transaction-scoped advisory lock that
// serialises admission across every process of the fleet.
const admissionLock = 0x72660001

// Admission bounds how many reviews run at once.
type Admission struct {
	// Capacity is how many reviews may run at once fleet-wide, a ceiling
	// over what the slots allow (0: no ceiling).
	Capacity int
	// PerBatch caps the running reviews of one batch unless the batch sets
	// its own cap (0: no cap).
	PerBatch int
	// Slots is the fleet's worker slots (tasks the live workers run at
	// once); 0 means not known, and then only the ceilings bound admission.
	// With slots known, batch reviews are admitted while the pending items
	// of running reviews stay under BatchRoom × Slots, interactive ones
	// under InteractiveRoom × Slots: the fleet keeps a task waiting for
	// every slot, and no more.
	Slots int
	// HoldBatches admits no batch review, whatever the room: the provider
	// asked the fleet to wait, and a review admitted now would only spend
	// its deadline waiting.
	HoldBatches bool
}

// BatchRoom and InteractiveRoom are the pending items per worker slot up
// to which batch and interactive reviews are admitted: one task running
// and one waiting per slot for batches, twice that for interactive
// reviews, which a full fleet of batch work must not hold back.
const (
	BatchRoom       = 2
	InteractiveRoom = 4
)

// admissionCandidate is a queued review in admission order.
type admissionCandidate struct {
	id    string
	batch bool
	items int // its first stage's pending items
}

// AdmitReviews starts queued reviews while the fleet has room: interactive
// reviews first, then batch reviews shared fairly among the batches (each
// next place goes to the batch with the fewest running, the oldest review
// first), never more than a batch's cap from one batch. A batch alone may
// take the whole fleet. Each admitted review becomes running with its
// deadline counted from now. It returns the admitted review IDs in
// admission order.
//
// Admission holds a Postgres advisory lock for its transaction, so two
// processes admitting at once never exceed the capacity between them.
// Running reviews already past their deadline do not hold a place: the
// reconciler is about to fail them.
//
// A non-empty only restricts admission to that one review.
func (s *Store) AdmitReviews(ctx context.Context, a Admission, only string) ([]string, error) {
	var admitted []string
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		if err := q.TakeAdmissionLock(ctx, admissionLock); err != nil {
			return fmt.Errorf("take the admission lock: %w", err)
		}
		limit := int64(1 << 30)
		if a.Capacity > 0 {
			running, err := q.CountRunningReviews(ctx)
			if err != nil {
				return fmt.Errorf("count running reviews: %w", err)
			}
			limit = int64(a.Capacity) - running
		}
		busy := 0
		if a.Slots > 0 {
			if err := tx.QueryRow(ctx, `
				SELECT count(*) FROM stage_items si JOIN reviews r ON r.id = si.review_id
				WHERE si.status = 'pending' AND r.status = 'running' AND r.deadline_at > now()`).Scan(&busy); err != nil {
				return fmt.Errorf("count the running reviews' pending items: %w", err)
			}
			// Each admitted review adds at least one item.
			limit = min(limit, int64(InteractiveRoom*a.Slots-busy))
		}
		if limit <= 0 {
			return nil
		}
		cands, err := admissionCandidates(ctx, tx, int(limit), a.PerBatch, only)
		if err != nil {
			return err
		}
		ids := chooseAdmitted(cands, a, busy)
		if len(ids) == 0 {
			return nil
		}
		started, err := q.AdmitReviews(ctx, ids)
		if err != nil {
			return fmt.Errorf("admit reviews: %w", err)
		}
		// The update returns rows in whatever order it met them; the
		// caller gets them in admission order.
		admitted = slices.DeleteFunc(ids, func(id string) bool { return !slices.Contains(started, id) })
		return nil
	})
	if err != nil {
		return nil, err
	}
	return admitted, nil
}

// admissionCandidates lists up to limit queued reviews that their batch's
// cap lets start, in admission order: interactive reviews by age, then
// batch reviews by the place each would take in its batch (running ones
// plus its rank), so the batches take turns, then by age.
func admissionCandidates(ctx context.Context, tx pgx.Tx, limit, perBatch int, only string) ([]admissionCandidate, error) {
	rows, err := tx.Query(ctx, `
		WITH running AS (
		    SELECT batch_id, count(*) AS n FROM reviews
		    WHERE status = 'running' AND deadline_at > now() AND batch_id IS NOT NULL
		    GROUP BY batch_id),
		cand AS (
		    SELECT r.id, r.kind, r.created_at, r.batch_id,
		           row_number() OVER (PARTITION BY r.batch_id ORDER BY r.created_at, r.id) AS rn,
		           coalesce(nullif(b.max_running, 0), $2) AS cap,
		           coalesce(ru.n, 0) AS n
		    FROM reviews r
		    LEFT JOIN batches b ON b.id = r.batch_id
		    LEFT JOIN running ru ON ru.batch_id = r.batch_id
		    WHERE r.status = 'queued' AND ($3 = '' OR r.id::text = $3)
		      AND (b.id IS NULL OR b.status <> 'cancelled')),
		chosen AS (
		    SELECT id, kind, batch_id, created_at, rn, n FROM cand
		    WHERE batch_id IS NULL OR cap <= 0 OR rn + n <= cap
		    ORDER BY (kind = 'bulk'), CASE WHEN batch_id IS NULL THEN 0 ELSE rn + n END, created_at, id
		    LIMIT $1)
		SELECT c.id, c.kind = 'bulk',
		       (SELECT count(*) FROM stage_items si WHERE si.review_id = c.id AND si.status = 'pending')
		FROM chosen c
		ORDER BY (c.kind = 'bulk'), CASE WHEN c.batch_id IS NULL THEN 0 ELSE c.rn + c.n END, c.created_at, c.id`,
		limit, perBatch, only)
	if err != nil {
		return nil, fmt.Errorf("choose reviews to admit: %w", err)
	}
	cands, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (admissionCandidate, error) {
		var c admissionCandidate
		err := row.Scan(&c.id, &c.batch, &c.items)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("choose reviews to admit: %w", err)
	}
	return cands, nil
}

// chooseAdmitted takes candidates in order while the slots leave room for
// their items; busy is the pending items of the running reviews. The first
// candidate a room allows always starts, however many items it has.
func chooseAdmitted(cands []admissionCandidate, a Admission, busy int) []string {
	var ids []string
	for _, c := range cands {
		if c.batch && a.HoldBatches {
			break // batch reviews come last: none of them may start
		}
		if a.Slots > 0 {
			room := InteractiveRoom * a.Slots
			if c.batch {
				room = BatchRoom * a.Slots
			}
			if busy >= room {
				break // the rooms only shrink down the order
			}
			busy += max(c.items, 1)
		}
		ids = append(ids, c.id)
	}
	return ids
}

// QueuePosition is a queued review's place in the admission order (1 is
// next) and how many reviews are queued in all; 0, n when it is not queued.
func (s *Store) QueuePosition(ctx context.Context, id string) (pos, total int, err error) {
	r, err := s.q.QueuePosition(ctx, id)
	if err != nil {
		return 0, 0, fmt.Errorf("queue position of %s: %w", id, translate(err))
	}
	return int(r.Pos), int(r.Total), nil
}

// RunningReviews counts the reviews running now (deadline not passed).
func (s *Store) RunningReviews(ctx context.Context) (int, error) {
	n, err := s.q.CountRunningReviews(ctx)
	if err != nil {
		return 0, fmt.Errorf("count running reviews: %w", err)
	}
	return int(n), nil
}
