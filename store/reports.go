package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
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
		if err := s.q.WithTx(tx).SaveReport(ctx, reportParams(r)); err != nil {
			return fmt.Errorf("store report of %s: %w", r.ReviewID, err)
		}
		return closeItem(ctx, tx, r.ReviewID, review.StageReport, key, review.ItemDone, "")
	})
}

// SaveReport stores (or replaces) a review's report outside the pipeline,
// e.g. when a failed review is summarised.
func (s *Store) SaveReport(ctx context.Context, r Report) error {
	if err := s.q.SaveReport(ctx, reportParams(r)); err != nil {
		return fmt.Errorf("store report of %s: %w", r.ReviewID, err)
	}
	return nil
}

func reportParams(r Report) sqlcdb.SaveReportParams {
	return sqlcdb.SaveReportParams{ReviewID: r.ReviewID, Markdown: r.Markdown, JSON: r.JSON, SARIF: r.SARIF}
}

// GetReport loads a review's stored report.
func (s *Store) GetReport(ctx context.Context, reviewID string) (Report, error) {
	r, err := s.q.GetReport(ctx, reviewID)
	if err != nil {
		return Report{}, fmt.Errorf("get report of %s: %w", reviewID, translate(err))
	}
	return Report{ReviewID: reviewID, Markdown: r.Markdown, JSON: r.JSON, SARIF: r.SARIF, CreatedAt: r.CreatedAt}, nil
}
