package report

import (
	"context"
	"errors"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/feedback"
	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// learn applies what the feedback on earlier posted reviews of the pull
// request's repository taught: findings dismissed there before on the
// same code are marked (reported, not posted again), findings of a kind
// dismissed there lose confidence, and with harness.calibrate the
// repository's outcomes move the thresholds (set in overrides). Every
// effect is written on the finding or the report. A review not made for a
// pull request learns nothing.
func learn(ctx context.Context, st *store.Store, reviewID string, cfg config.Config, active []render.Finding,
	content map[string]string, overrides map[review.RiskType]float64) ([]render.CalibratedThreshold, error) {
	for i := range active {
		feedback.Describe(&active[i], content[active[i].File])
	}
	pr, err := st.ReviewPullRequest(ctx, reviewID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	repo := store.Repository{Host: pr.Host, Owner: pr.Owner, Repo: pr.Repo}
	learnings, err := st.LearningsOf(ctx, repo)
	if err != nil {
		return nil, err
	}
	feedback.Apply(active, learnings)
	if !cfg.Harness.Calibrate {
		return nil, nil
	}
	stats, err := st.CalibrationOf(ctx, repo)
	if err != nil {
		return nil, err
	}
	cal := feedback.Calibrate(cfg.Harness.ConfidenceThreshold, cfg.Harness.ConfidenceOverrides, stats)
	for _, c := range cal {
		overrides[review.RiskType(c.RiskType)] = c.Threshold
	}
	return cal, nil
}
