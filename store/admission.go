package store

import (
	"context"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
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
		if limit <= 0 {
			return nil
		}
		ids, err := q.ChooseAdmissions(ctx, sqlcdb.ChooseAdmissionsParams{
			MaxReviews: int32(min(limit, math.MaxInt32)), PerBatch: int32(min(a.PerBatch, math.MaxInt32)), OnlyReview: only,
		})
		if err != nil {
			return fmt.Errorf("choose reviews to admit: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		admitted, err = q.AdmitReviews(ctx, ids)
		if err != nil {
			return fmt.Errorf("admit reviews: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return admitted, nil
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
