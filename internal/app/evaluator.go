package app

import (
	"context"
	"fmt"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/evaluation"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
)

// Evaluator wires an evaluator to the app: each case is reviewed through
// RunReview, runs are stored in the store, and the judge calls the app's
// LLM, costed at the configured prices. The window and the judge model
// are the configured ones.
func (a *App) Evaluator() *evaluation.Evaluator {
	prices := a.Cfg.LLM.Prices
	return &evaluation.Evaluator{
		Review: a.reviewCase, Runs: a.Store, LLM: a.LLM,
		Cost: func(model string, in, out int) float64 {
			return CallCost(prices, model, in, out)
		},
		Window: a.Cfg.Evaluation.Window, JudgeModel: a.Cfg.Evaluation.JudgeModel, Parallel: 1,
	}
}

// reviewCase runs one case's review with the harness settings h and reads
// its report.
func (a *App) reviewCase(ctx context.Context, ch evaluation.Change, h config.Harness) (evaluation.Reviewed, error) {
	// A dataset is read from the operator's disk: its cases may name
	// directories and diff files on this host.
	req := submit.Request{Repo: ch.Repo, Base: ch.Base, Head: ch.Head, DiffFile: ch.DiffFile, Purpose: ch.Purpose, Origin: submit.FromOperator}
	out, err := a.RunReview(ctx, ReviewRequest{Change: req}, RunOptions{Harness: &h})
	rv := evaluation.Reviewed{ID: out.ID}
	if err != nil {
		if rv.ID == "" {
			return rv, err
		}
		return rv, fmt.Errorf("review %s: %w", rv.ID, err)
	}
	r := out.Review
	if r.Status == review.ReviewFailed {
		return rv, fmt.Errorf("review %s failed: %s", rv.ID, r.Error)
	}
	if rv.Report, err = a.Report(ctx, rv.ID); err != nil {
		return rv, err
	}
	rv.Incomplete, rv.FailedItems = r.Incomplete, r.FailedItems
	return rv, nil
}
