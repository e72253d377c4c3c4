package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// Report is a review's rendered report in every format.
type Report struct {
	ReviewID  string
	Markdown  string
	JSON      json.RawMessage
	SARIF     json.RawMessage
	CreatedAt time.Time
}

// FinishReportItem stores the report and marks the report item done in one
// transaction; a duplicate delivery returns ErrItemClosed.
func (s *Store) FinishReportItem(ctx context.Context, key string, r Report) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockPending(ctx, tx, r.ReviewID, review.StageReport, key); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO reports (review_id, markdown, json, sarif) VALUES ($1,$2,$3,$4)
			ON CONFLICT (review_id) DO UPDATE
			SET markdown = EXCLUDED.markdown, json = EXCLUDED.json, sarif = EXCLUDED.sarif, created_at = now()`,
			r.ReviewID, r.Markdown, r.JSON, r.SARIF); err != nil {
			return fmt.Errorf("store report of %s: %w", r.ReviewID, err)
		}
		return closeItem(ctx, tx, r.ReviewID, review.StageReport, key, review.ItemDone, "")
	})
}

// SaveReport stores (or replaces) a review's report outside the pipeline,
// e.g. when a failed review is summarised.
func (s *Store) SaveReport(ctx context.Context, r Report) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO reports (review_id, markdown, json, sarif) VALUES ($1,$2,$3,$4)
		ON CONFLICT (review_id) DO UPDATE
		SET markdown = EXCLUDED.markdown, json = EXCLUDED.json, sarif = EXCLUDED.sarif, created_at = now()`,
		r.ReviewID, r.Markdown, r.JSON, r.SARIF)
	if err != nil {
		return fmt.Errorf("store report of %s: %w", r.ReviewID, err)
	}
	return nil
}

// GetReport loads a review's stored report.
func (s *Store) GetReport(ctx context.Context, reviewID string) (Report, error) {
	r := Report{ReviewID: reviewID}
	err := s.pool.QueryRow(ctx, `SELECT markdown, json, sarif, created_at FROM reports WHERE review_id = $1`, reviewID).
		Scan(&r.Markdown, &r.JSON, &r.SARIF, &r.CreatedAt)
	if err != nil {
		return Report{}, fmt.Errorf("get report of %s: %w", reviewID, translate(err))
	}
	return r, nil
}
