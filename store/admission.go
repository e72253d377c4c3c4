package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// admissionLock is the key of the transaction-scoped advisory lock that
// serialises admission across every process of the fleet.
const admissionLock = 0x72660001

// Admission bounds how many reviews run at once.
type Admission struct {
	// Capacity is how many reviews may run at once fleet-wide (0: no limit).
	Capacity int
	// PerBatch caps the running reviews of one batch unless the batch sets
	// its own cap (0: no cap).
	PerBatch int
}

// AdmitReviews starts queued reviews while the fleet has room: interactive
// reviews first, then the oldest, never more than a batch's cap from one
// batch. Each admitted review becomes running with its deadline counted
// from now. It returns the admitted review IDs.
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
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, admissionLock); err != nil {
			return fmt.Errorf("take the admission lock: %w", err)
		}
		limit := 1 << 30
		if a.Capacity > 0 {
			var running int
			if err := tx.QueryRow(ctx, `
				SELECT count(*) FROM reviews WHERE status = 'running' AND deadline_at > now()`).Scan(&running); err != nil {
				return fmt.Errorf("count running reviews: %w", err)
			}
			limit = a.Capacity - running
		}
		if limit <= 0 {
			return nil
		}
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
			      AND (b.id IS NULL OR b.status <> 'cancelled'))
			SELECT id FROM cand
			WHERE batch_id IS NULL OR cap <= 0 OR rn + n <= cap
			ORDER BY (kind = 'bulk'), created_at, id
			LIMIT $1`, limit, a.PerBatch, only)
		if err != nil {
			return fmt.Errorf("choose reviews to admit: %w", err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("choose reviews to admit: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		rows, err = tx.Query(ctx, `
			UPDATE reviews
			SET status = 'running', started_at = now(), stage_started_at = now(),
			    deadline_at = now() + timeout_ms * interval '1 millisecond'
			WHERE id = ANY($1::uuid[]) AND status = 'queued'
			RETURNING id`, ids)
		if err != nil {
			return fmt.Errorf("admit reviews: %w", err)
		}
		admitted, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return nil, err
	}
	return admitted, nil
}

// QueuePosition is a queued review's place in the admission order (1 is
// next) and how many reviews are queued in all; 0, n when it is not queued.
func (s *Store) QueuePosition(ctx context.Context, id string) (pos, total int, err error) {
	err = s.pool.QueryRow(ctx, `
		WITH q AS (
		    SELECT id, row_number() OVER (ORDER BY (kind = 'bulk'), created_at, id) AS pos
		    FROM reviews WHERE status = 'queued')
		SELECT coalesce((SELECT pos FROM q WHERE id = $1::uuid), 0), (SELECT count(*) FROM q)`, id).Scan(&pos, &total)
	if err != nil {
		return 0, 0, fmt.Errorf("queue position of %s: %w", id, translate(err))
	}
	return pos, total, nil
}

// RunningReviews counts the reviews running now (deadline not passed).
func (s *Store) RunningReviews(ctx context.Context) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM reviews WHERE status = 'running' AND deadline_at > now()`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count running reviews: %w", err)
	}
	return n, nil
}
