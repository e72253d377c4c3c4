package pipeline

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/reviewfleet/reviewfleet/store"
)

// Capacity tells admission how much the fleet can take now. Either
// function may be nil.
type Capacity struct {
	// Slots returns the live workers' slots (heartbeat.SlotCache). A fleet
	// with no live worker counts one slot, so a review still starts and
	// the first worker to come finds work.
	Slots func() (int, error)
	// ProviderWait returns how long the provider asked the fleet to wait
	// (a 429 or an exhausted quota); batch reviews are not admitted
	// meanwhile.
	ProviderWait func(ctx context.Context) time.Duration
	// QuotaBacklog returns how long calls still wait for the fleet's
	// shared quota beyond its pacing (llm.QuotaBacklog): the quota, not
	// the slots, bounds the fleet, and batch reviews are not admitted
	// meanwhile.
	QuotaBacklog func(ctx context.Context) time.Duration
	// AdmitEvery is how often at most this process admits after its items
	// end (0: DefaultAdmitEvery; negative: only when a review ends).
	AdmitEvery time.Duration

	lastAdmit atomic.Int64 // Unix nanoseconds of this process's last admission
}

// DefaultAdmitEvery is how often one process at most admits after its
// items end (Capacity.AdmitEvery).
const DefaultAdmitEvery = 200 * time.Millisecond

// admission returns p.Admission with what the fleet can take now.
func (p *Pipeline) admission(ctx context.Context) store.Admission {
	a := p.Admission
	c := p.Capacity
	if c == nil {
		return a
	}
	if c.Slots != nil {
		n, err := c.Slots()
		if err != nil {
			// Without the heartbeats the slots are unknown: the ceilings
			// alone bound admission, as they did before slots counted.
			p.log().Warn("read the fleet's worker slots", "err", err)
		} else {
			a.Slots = max(n, 1)
		}
	}
	if c.ProviderWait != nil && c.ProviderWait(ctx) > 0 {
		a.HoldBatches = true
	}
	if !a.HoldBatches && c.QuotaBacklog != nil && c.QuotaBacklog(ctx) > 0 {
		a.HoldBatches = true
	}
	return a
}

// Admit starts the queued reviews the fleet has room for (see
// store.AdmitReviews) and enqueues their first stage. It returns how many
// it started. Every process may call it at any time: admission is atomic
// across the fleet.
func (p *Pipeline) Admit(ctx context.Context) (int, error) {
	if p.Capacity != nil {
		p.Capacity.lastAdmit.Store(time.Now().UnixNano())
	}
	ids, err := p.Store.AdmitReviews(ctx, p.admission(ctx), p.AdmitOnly)
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

// admitSoon admits after an item ended, unless this process admitted less
// than AdmitEvery ago: a slot an item freed is filled by the next review
// without waiting for a review to end or the scheduler's pass, and a busy
// worker does not take the admission lock for every item.
func (p *Pipeline) admitSoon(ctx context.Context) {
	c := p.Capacity
	if c == nil || p.Store == nil {
		return
	}
	every := c.AdmitEvery
	if every == 0 {
		every = DefaultAdmitEvery
	}
	if every < 0 {
		return
	}
	last := c.lastAdmit.Load()
	now := time.Now().UnixNano()
	if now-last < int64(every) || !c.lastAdmit.CompareAndSwap(last, now) {
		return
	}
	_ = p.admitNext(ctx)
}
