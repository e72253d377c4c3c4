package pipeline

import (
	"context"
	"fmt"
)

// Admit starts the queued reviews the fleet has room for (see
// store.AdmitReviews) and enqueues their first stage. It returns how many
// it started. Every process may call it at any time: admission is atomic
// across the fleet.
func (p *Pipeline) Admit(ctx context.Context) (int, error) {
	a := p.Admission
	ids, err := p.Store.AdmitReviews(ctx, a, p.AdmitOnly)
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		r, err := p.Store.GetReview(ctx, id)
		if err != nil {
			return len(ids), fmt.Errorf("load admitted review: %w", err)
		}
		n, err := p.EnqueuePending(ctx, id, r.Stage)
		if err != nil {
			// The ledger holds the items: the reconciler enqueues them later.
			p.log().Warn("enqueue admitted review", "review", id, "err", err)
			continue
		}
		if n == 0 {
			if err := p.AfterItem(ctx, id); err != nil {
				return len(ids), err
			}
		}
	}
	return len(ids), nil
}

// admitNext admits queued reviews after a review ended. A failure to
// admit is not the ending review's problem: the scheduler admits on its
// next pass.
func (p *Pipeline) admitNext(ctx context.Context) error {
	if _, err := p.Admit(ctx); err != nil {
		p.log().Warn("admit queued reviews", "err", err)
	}
	return nil
}
