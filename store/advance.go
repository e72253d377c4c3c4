package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
)

// Planner decides the next stage's ledger rows. It runs inside the
// transaction that moves the review, so what it writes through tx commits
// together with the transition or not at all.
type Planner func(ctx context.Context, tx *Tx) ([]review.Item, error)

// Tx gives a Planner read and write access to one review inside the
// transition's transaction.
type Tx struct {
	tx       pgx.Tx
	reviewID string
}

// ReviewID is the review being advanced.
func (t *Tx) ReviewID() string { return t.reviewID }

// Findings returns every finding of the review.
func (t *Tx) Findings(ctx context.Context) ([]review.Finding, error) {
	return listFindings(ctx, t.tx, t.reviewID)
}

// Verdicts returns the verdict each finding received at a stage.
func (t *Tx) Verdicts(ctx context.Context, stage review.Stage) (map[int64]Verdict, error) {
	rows, err := t.tx.Query(ctx, `
		SELECT finding_id, verdict, confidence_before, confidence_after, reason
		FROM verdicts WHERE review_id = $1 AND stage = $2`, t.reviewID, string(stage))
	if err != nil {
		return nil, fmt.Errorf("%s verdicts of %s: %w", stage, t.reviewID, err)
	}
	defer rows.Close()
	out := map[int64]Verdict{}
	for rows.Next() {
		v := Verdict{ReviewID: t.reviewID, Stage: stage}
		if err := rows.Scan(&v.FindingID, &v.Verdict, &v.ConfidenceBefore, &v.ConfidenceAfter, &v.Reason); err != nil {
			return nil, err
		}
		out[v.FindingID] = v
	}
	return out, rows.Err()
}

// ChangedLines maps each reviewed file to its new-side changed lines.
func (t *Tx) ChangedLines(ctx context.Context) (map[string][]int, error) {
	rows, err := t.tx.Query(ctx, `
		SELECT path, changed_lines FROM review_files WHERE review_id = $1 AND skip_reason = ''`, t.reviewID)
	if err != nil {
		return nil, fmt.Errorf("changed lines of %s: %w", t.reviewID, err)
	}
	defer rows.Close()
	out := map[string][]int{}
	for rows.Next() {
		var path string
		var lines []int
		if err := rows.Scan(&path, &lines); err != nil {
			return nil, err
		}
		out[path] = lines
	}
	return out, rows.Err()
}

// Triage is the manager's decision about one finding.
type Triage struct {
	FindingID  int64
	Status     review.FindingStatus
	Reason     string
	MergedInto int64
	Score      float64
	// LineStart and LineEnd, when set, replace the finding's range (the
	// manager puts swapped ranges in order).
	LineStart, LineEnd int
}

// ApplyTriage records the manager's decisions on the findings.
func (t *Tx) ApplyTriage(ctx context.Context, decisions []Triage) error {
	for _, d := range decisions {
		var merged any
		if d.MergedInto != 0 {
			merged = d.MergedInto
		}
		if _, err := t.tx.Exec(ctx, `
			UPDATE findings SET status = $2, drop_reason = $3, merged_into = $4, score = $5,
			       line_start = CASE WHEN $7 > 0 THEN $7 ELSE line_start END,
			       line_end = CASE WHEN $8 > 0 THEN $8 ELSE line_end END
			WHERE id = $1 AND review_id = $6`,
			d.FindingID, string(d.Status), d.Reason, merged, d.Score, t.reviewID, d.LineStart, d.LineEnd); err != nil {
			return fmt.Errorf("triage finding %d: %w", d.FindingID, err)
		}
	}
	return nil
}

// RecordVerdicts writes verdict rows decided without a task (for example a
// finding below a stage's threshold, recorded as skipped).
func (t *Tx) RecordVerdicts(ctx context.Context, vs []Verdict) error {
	for _, v := range vs {
		v.ReviewID = t.reviewID
		if err := insertVerdict(ctx, t.tx, v); err != nil {
			return err
		}
	}
	return nil
}

// SaveEvalSummary stores the per-risk-type tally of eval verdicts.
func (t *Tx) SaveEvalSummary(ctx context.Context) error {
	sum, err := evalSummary(ctx, t.tx, t.reviewID)
	if err != nil {
		return err
	}
	for risk, c := range sum {
		if _, err := t.tx.Exec(ctx, `
			INSERT INTO eval_summaries (review_id, risk_type, confirmed, disputed, uncertain)
			VALUES ($1,$2,$3,$4,$5)
			ON CONFLICT (review_id, risk_type) DO UPDATE
			SET confirmed = EXCLUDED.confirmed, disputed = EXCLUDED.disputed, uncertain = EXCLUDED.uncertain`,
			t.reviewID, string(risk), c.Confirmed, c.Disputed, c.Uncertain); err != nil {
			return fmt.Errorf("save eval summary: %w", err)
		}
	}
	return nil
}

// Advance moves a running review from stage `from` to stage `to` when no
// ledger item of `from` is pending and not every one of them failed (a
// stage that reviewed nothing fails the review instead; checking it here,
// in the same statement, closes the window in which an item failing
// concurrently could let the review move on empty). Exactly one caller wins: the move is a
// single conditional UPDATE, and the winner's planner writes the next
// stage's ledger rows in the same transaction. It reports whether this call
// won. Moving to review.StageDone also marks the review done, and
// incomplete when any of its items failed or was skipped for budget.
func (s *Store) Advance(ctx context.Context, reviewID string, from, to review.Stage, plan Planner) (bool, error) {
	won := false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		status := review.ReviewRunning
		if to == review.StageDone {
			status = review.ReviewDone
		}
		tag, err := tx.Exec(ctx, `
			UPDATE reviews
			SET stage = $3, status = $4, stage_started_at = now(),
			    finished_at = CASE WHEN $4 = 'done' THEN now() ELSE finished_at END,
			    failed_items = f.n, skipped_budget = f.skipped, incomplete = ($4 = 'done' AND f.n + f.skipped > 0)
			FROM (SELECT count(*) FILTER (WHERE status = 'failed') AS n,
			             count(*) FILTER (WHERE status = 'skipped_budget') AS skipped
			      FROM stage_items WHERE review_id = $1 AND status IN ('failed', 'skipped_budget')) f
			WHERE id = $1 AND stage = $2 AND status = 'running'
			  AND NOT EXISTS (SELECT 1 FROM stage_items
			                  WHERE review_id = $1 AND stage = $2 AND status = 'pending')
			  AND (NOT EXISTS (SELECT 1 FROM stage_items WHERE review_id = $1 AND stage = $2)
			       OR EXISTS (SELECT 1 FROM stage_items
			                  WHERE review_id = $1 AND stage = $2 AND status <> 'failed'))`,
			reviewID, string(from), string(to), status)
		if err != nil {
			return fmt.Errorf("move review %s from %s to %s: %w", reviewID, from, to, err)
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		won = true
		if plan == nil {
			return nil
		}
		items, err := plan(ctx, &Tx{tx: tx, reviewID: reviewID})
		if err != nil {
			return fmt.Errorf("plan %s of review %s: %w", to, reviewID, err)
		}
		for i := range items {
			items[i].Stage = to
		}
		return insertItems(ctx, sqlcdb.New(tx), reviewID, items)
	})
	if err != nil {
		return false, err
	}
	return won, nil
}
