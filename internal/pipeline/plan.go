package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// planner returns the function that writes stage `to`'s ledger rows for
// review r inside the transition's transaction.
func (p *Pipeline) planner(r review.Review, to review.Stage) store.Planner {
	cfg := Settings(r)
	return func(ctx context.Context, tx *store.Tx) ([]review.Item, error) {
		for _, s := range transitionsAfter(r.Stage) {
			if err := s.Transition(p, ctx, tx, cfg); err != nil {
				return nil, fmt.Errorf("%s step of review %s: %w", s.Stage, r.ID, err)
			}
		}
		switch to {
		case review.StageVerify:
			return findingItems(ctx, tx, to, func(review.Finding) (bool, string) { return true, "" })
		case review.StageExpert:
			verified, err := tx.Verdicts(ctx, review.StageVerify)
			if err != nil {
				return nil, err
			}
			return findingItems(ctx, tx, to, func(f review.Finding) (bool, string) {
				if v, ok := verified[f.ID]; ok && v.Verdict == review.VerdictUnanchored {
					return false, "not anchored in the code at verify: " + v.Reason
				}
				if f.Confidence < cfg.Harness.ExpertMinConfidence {
					return false, fmt.Sprintf("confidence %.2f is below the expert threshold %.2f", f.Confidence, cfg.Harness.ExpertMinConfidence)
				}
				return true, ""
			})
		case review.StageEval:
			judged, err := tx.Verdicts(ctx, review.StageExpert)
			if err != nil {
				return nil, err
			}
			// Eval cross-examines an expert conclusion that the finding is
			// real (or may be): findings the expert refuted, skipped or
			// never judged (its item failed) have nothing to confirm, and
			// get no eval row at all.
			items, err := findingItems(ctx, tx, to, func(f review.Finding) (bool, string) {
				v, ok := judged[f.ID]
				return ok && (v.Verdict == review.VerdictConfirmed || v.Verdict == review.VerdictInconclusive) &&
					f.Confidence >= cfg.Harness.EvalMinConfidence, ""
			})
			return items, err
		case review.StageReport:
			if err := tx.SaveEvalSummary(ctx); err != nil {
				return nil, err
			}
			if _, err := tx.ResolveSince(ctx); err != nil {
				return nil, err
			}
			return []review.Item{{Key: "report"}}, nil
		}
		return nil, nil
	}
}

// runManager is the manager step: it runs p.Triage over the intent stage's
// candidates and records its decisions.
func (p *Pipeline) runManager(ctx context.Context, tx *store.Tx, cfg config.Config) error {
	if p.Triage == nil {
		return nil
	}
	findings, err := tx.Findings(ctx)
	if err != nil {
		return err
	}
	// Findings carried from an earlier review were triaged there.
	findings = slices.DeleteFunc(findings, func(f review.Finding) bool { return f.CarriedFrom != 0 })
	changed, err := tx.ChangedLines(ctx)
	if err != nil {
		return err
	}
	return tx.ApplyTriage(ctx, p.Triage(findings, changed, cfg.Manager))
}

// findingItems makes one ledger row per active finding that eligible
// accepts. A finding it turns down with a reason gets a "skipped" verdict
// row, so its trail shows the stage; turned down without a reason, it gets
// no row.
func findingItems(ctx context.Context, tx *store.Tx, stage review.Stage, eligible func(review.Finding) (bool, string)) ([]review.Item, error) {
	findings, err := tx.Findings(ctx)
	if err != nil {
		return nil, err
	}
	var items []review.Item
	var skipped []review.Verdict
	for _, f := range findings {
		if f.Status != review.StatusActive || f.CarriedFrom != 0 {
			continue // carried findings keep the verdicts of the review they come from
		}
		ok, why := eligible(f)
		switch {
		case ok:
			items = append(items, review.Item{Key: FindingKey(f.ID)})
		case why != "":
			skipped = append(skipped, review.Verdict{
				FindingID: f.ID, Stage: stage, Verdict: review.VerdictSkipped,
				ConfidenceBefore: f.Confidence, ConfidenceAfter: f.Confidence, Reason: why,
			})
		}
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
