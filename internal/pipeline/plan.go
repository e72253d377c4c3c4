package pipeline

import (
	"context"
	"fmt"
	"strconv"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// planner returns the function that writes stage `to`'s ledger rows for
// review r inside the transition's transaction.
func (p *Pipeline) planner(r store.Review, to review.Stage) store.Planner {
	cfg := Settings(r)
	return func(ctx context.Context, tx *store.Tx) ([]store.Item, error) {
		if r.Stage == review.StageIntent {
			if err := p.triage(ctx, tx, cfg.Manager); err != nil {
				return nil, err
			}
		}
		switch to {
		case review.StageVerify:
			return findingItems(ctx, tx, to, -1, cfg)
		case review.StageExpert:
			return findingItems(ctx, tx, to, cfg.Harness.ExpertMinConfidence, cfg)
		case review.StageEval:
			return findingItems(ctx, tx, to, cfg.Harness.EvalMinConfidence, cfg)
		case review.StageReport:
			if err := tx.SaveEvalSummary(ctx); err != nil {
				return nil, err
			}
			return []store.Item{{Key: "report"}}, nil
		}
		return nil, nil
	}
}

// triage runs the manager over the intent stage's candidates.
func (p *Pipeline) triage(ctx context.Context, tx *store.Tx, cfg config.Manager) error {
	if p.Triage == nil {
		return nil
	}
	findings, err := tx.Findings(ctx)
	if err != nil {
		return err
	}
	changed, err := tx.ChangedLines(ctx)
	if err != nil {
		return err
	}
	return tx.ApplyTriage(ctx, p.Triage(findings, changed, cfg))
}

// findingItems makes one ledger row per active finding at or above min
// confidence; findings below it get a "skipped" verdict row so that every
// finding's trail shows every enabled stage.
func findingItems(ctx context.Context, tx *store.Tx, stage review.Stage, min float64, cfg config.Config) ([]store.Item, error) {
	findings, err := tx.Findings(ctx)
	if err != nil {
		return nil, err
	}
	var items []store.Item
	var skipped []store.Verdict
	for _, f := range findings {
		if f.Status != review.StatusActive {
			continue
		}
		if f.Confidence < min {
			skipped = append(skipped, store.Verdict{
				FindingID: f.ID, Stage: stage, Verdict: review.VerdictSkipped,
				ConfidenceBefore: f.Confidence, ConfidenceAfter: f.Confidence,
				Reason: fmt.Sprintf("confidence %.2f is below the %s threshold %.2f", f.Confidence, stage, min),
			})
			continue
		}
		items = append(items, store.Item{Key: FindingKey(f.ID)})
	}
	if err := tx.RecordVerdicts(ctx, skipped); err != nil {
		return nil, err
	}
	return items, nil
}

// FindingKey is the ledger item key of a per-finding task.
func FindingKey(id int64) string { return "f" + strconv.FormatInt(id, 10) }

// ParseFindingKey is the inverse of FindingKey.
func ParseFindingKey(key string) (int64, error) {
	if len(key) < 2 || key[0] != 'f' {
		return 0, fmt.Errorf("item key %q does not name a finding", key)
	}
	id, err := strconv.ParseInt(key[1:], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("item key %q does not name a finding: %w", key, err)
	}
	return id, nil
}
