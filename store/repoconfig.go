package store

import (
	"context"
	"fmt"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
)

func saveConfigWarnings(ctx context.Context, q *sqlcdb.Queries, id string, ws []review.ConfigWarning) error {
	if len(ws) == 0 {
		return nil
	}
	if err := q.SaveConfigWarnings(ctx, sqlcdb.SaveConfigWarningsParams{ID: id, Warnings: ws}); err != nil {
		return fmt.Errorf("store configuration warnings: %w", err)
	}
	return nil
}

// ConfigWarnings returns the invalid .reviewfleet.yaml files a review's
// repository held at the reviewed revision.
func (s *Store) ConfigWarnings(ctx context.Context, reviewID string) ([]review.ConfigWarning, error) {
	ws, err := s.q.ConfigWarnings(ctx, reviewID)
	if err != nil {
		return nil, fmt.Errorf("configuration warnings of %s: %w", reviewID, translate(err))
	}
	return ws, nil
}
