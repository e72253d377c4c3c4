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
	q        *sqlcdb.Queries // on tx
	reviewID string
}

// ReviewID is the review being advanced.
func (t *Tx) ReviewID() string { return t.reviewID }

// Findings returns every finding of the review.
func (t *Tx) Findings(ctx context.Context) ([]review.Finding, error) {
	return listFindings(ctx, t.q, t.reviewID)
}

// Verdicts returns the verdict each finding received at a stage.
func (t *Tx) Verdicts(ctx context.Context, stage review.Stage) (map[int64]review.Verdict, error) {
	rows, err := t.q.StageVerdicts(ctx, sqlcdb.StageVerdictsParams{ReviewID: t.reviewID, Stage: stage})
	if err != nil {
		return nil, fmt.Errorf("%s verdicts of %s: %w", stage, t.reviewID, err)
	}
	out := map[int64]review.Verdict{}
	for _, r := range rows {
		out[r.FindingID] = review.Verdict{ReviewID: t.reviewID, Stage: stage, FindingID: r.FindingID, Verdict: r.Verdict,
			ConfidenceBefore: r.ConfidenceBefore, ConfidenceAfter: r.ConfidenceAfter, Reason: r.Reason}
	}
	return out, nil
}

// ChangedLines maps each reviewed file to its new-side changed lines.
func (t *Tx) ChangedLines(ctx context.Context) (map[string][]int, error) {
	rows, err := t.q.ChangedLines(ctx, t.reviewID)
	if err != nil {
		return nil, fmt.Errorf("changed lines of %s: %w", t.reviewID, err)
	}
	out := map[string][]int{}
	for _, r := range rows {
		out[r.Path] = ints(r.ChangedLines)
	}
	return out, nil
}

// ApplyTriage records the manager's decisions on the findings.
func (t *Tx) ApplyTriage(ctx context.Context, decisions []review.Triage) error {
	for _, d := range decisions {
		var merged *int64
		if d.MergedInto != 0 {
			merged = &d.MergedInto
		}
		if err := t.q.TriageFinding(ctx, sqlcdb.TriageFindingParams{
			ID: d.FindingID, ReviewID: t.reviewID, Status: d.Status, Reason: d.Reason, MergedInto: merged,
			Score: d.Score, LineStart: i32(d.LineStart), LineEnd: i32(d.LineEnd),
		}); err != nil {
			return fmt.Errorf("triage finding %d: %w", d.FindingID, err)
		}
	}
	return nil
}

// RecordVerdicts writes verdict rows decided without a task (for example a
// finding below a stage's threshold, recorded as skipped).
func (t *Tx) RecordVerdicts(ctx context.Context, vs []review.Verdict) error {
	for _, v := range vs {
		v.ReviewID = t.reviewID
		if err := insertVerdict(ctx, t.q, v); err != nil {
			return err
		}
	}
	return nil
}

// SaveEvalSummary stores the per-risk-type tally of eval verdicts.
func (t *Tx) SaveEvalSummary(ctx context.Context) error {
	sum, err := evalSummary(ctx, t.q, t.reviewID)
	if err != nil {
		return err
	}
	for risk, c := range sum {
		if err := t.q.SaveEvalSummary(ctx, sqlcdb.SaveEvalSummaryParams{
			ReviewID: t.reviewID, RiskType: risk, Confirmed: i32(c.Confirmed), Disputed: i32(c.Disputed),
			Uncertain: i32(c.Uncertain),
		}); err != nil {
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
		q := s.q.WithTx(tx)
		n, err := q.AdvanceReview(ctx, sqlcdb.AdvanceReviewParams{ID: reviewID, FromStage: from, ToStage: to, Status: status})
		if err != nil {
			return fmt.Errorf("move review %s from %s to %s: %w", reviewID, from, to, err)
		}
		if n == 0 {
			return nil
		}
		won = true
		if plan == nil {
			return nil
		}
		items, err := plan(ctx, &Tx{tx: tx, q: q, reviewID: reviewID})
		if err != nil {
			return fmt.Errorf("plan %s of review %s: %w", to, reviewID, err)
		}
		for i := range items {
			items[i].Stage = to
		}
		return insertItems(ctx, q, reviewID, items)
	})
	if err != nil {
		return false, err
	}
	return won, nil
}
