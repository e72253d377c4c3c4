package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

func saveConfigWarnings(ctx context.Context, tx pgx.Tx, id string, ws []review.ConfigWarning) error {
	if len(ws) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `UPDATE reviews SET config_warnings = $2 WHERE id = $1`, id, ws); err != nil {
		return fmt.Errorf("store configuration warnings: %w", err)
	}
	return nil
}

// ConfigWarnings returns the invalid .reviewfleet.yaml files a review's
// repository held at the reviewed revision.
func (s *Store) ConfigWarnings(ctx context.Context, reviewID string) ([]review.ConfigWarning, error) {
	var ws []review.ConfigWarning
	if err := s.pool.QueryRow(ctx, `SELECT config_warnings FROM reviews WHERE id = $1`, reviewID).Scan(&ws); err != nil {
		return nil, fmt.Errorf("configuration warnings of %s: %w", reviewID, translate(err))
	}
	return ws, nil
}
