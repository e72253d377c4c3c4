package app

import (
	"context"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
)

// Submit prepares a change, stores it as a review and enqueues its first
// stage. It returns the review ID. A change with no reviewable file moves
// straight on to its report.
func (a *App) Submit(ctx context.Context, req submit.Request) (string, error) {
	if req.Repos == nil && req.CacheDir == "" {
		req.Repos = a.Snapshots
	}
	nr, err := submit.Prepare(ctx, a.Cfg, req)
	if err != nil {
		return "", err
	}
	id, err := a.Store.CreateReview(ctx, nr)
	if err != nil {
		return "", err
	}
	n, err := a.Pipeline.EnqueuePending(ctx, id, review.StageIntent)
	if err != nil {
		// The ledger holds the items: the reconciler enqueues them later.
		a.Log.Warn("enqueue intent items", "review", id, "err", err)
		return id, nil
	}
	if n == 0 {
		return id, a.Pipeline.AfterItem(ctx, id)
	}
	return id, nil
}
