package bulk

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/progress"
	"github.com/reviewfleet/reviewfleet/store"
)

// PollInterval is how often Wait reads the batch's state.
var PollInterval = 500 * time.Millisecond

// Line renders a batch's progress on one line, e.g.
// "7/12 ended · 6 done · 1 failed · 2 running · 3 queued · 80 calls · 41.2k tokens · ETA 1m10s".
// While the batch is being submitted, entries (its entry counts; zero when
// not read) says how many entries are still to submit.
func Line(b store.Batch, p store.BatchProgress, entries store.EntryCounts, now time.Time) string {
	line := fmt.Sprintf("%d/%d ended · %d done · %d failed · %d running · %d queued · %d calls · %s tokens",
		p.Done+p.Failed, p.Reviews, p.Done, p.Failed, p.Running, p.Queued, p.LLMCalls, humanCount(p.TokensIn+p.TokensOut))
	if b.Status == store.BatchSubmitting {
		if entries.Entries > 0 {
			line += fmt.Sprintf(" · submitting: %d of %d entries still to submit", entries.Pending(), entries.Entries)
		} else {
			line += fmt.Sprintf(" · submitting (%d entries)", b.Entries)
		}
	}
	if b.Status == store.BatchCancelled {
		line += " · cancelled"
	}
	if eta, ok := ETA(p, now); ok {
		line += " · ETA " + eta.Round(time.Second).String()
	}
	return line
}

// ETA estimates when the batch's last review ends from the pace so far
// (reviews ended per unit of time since the first started).
func ETA(p store.BatchProgress, now time.Time) (time.Duration, bool) {
	ended := p.Done + p.Failed
	if ended == 0 || p.FirstStarted == nil || p.Remaining() == 0 {
		return 0, false
	}
	per := now.Sub(*p.FirstStarted) / time.Duration(ended)
	return per * time.Duration(p.Remaining()), true
}

func humanCount(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// Wait follows a batch until its submission is over and every review has
// ended, writing a progress line to w (rewritten in place on a terminal).
// A stall on the provider's quota (waits.Provider) is shown on the line
// and counted in the ETA; a backlog on the fleet's own quota
// (waits.QuotaBacklog) is shown.
func Wait(ctx context.Context, st *store.Store, batchID string, w io.Writer, waits progress.FleetWaits) (store.BatchProgress, error) {
	out := progress.NewPrinter(w)
	t := time.NewTicker(PollInterval)
	defer t.Stop()
	for {
		b, err := st.GetBatch(ctx, batchID)
		if err != nil {
			return store.BatchProgress{}, err
		}
		p, err := st.GetBatchProgress(ctx, batchID)
		if err != nil {
			return p, err
		}
		var entries store.EntryCounts
		if b.Status == store.BatchSubmitting {
			if entries, err = st.BatchEntryCounts(ctx, batchID); err != nil {
				return p, err
			}
		}
		line := Line(b, p, entries, time.Now())
		line, note := withFleetWaits(ctx, line, p, time.Now(), waits)
		key := fmt.Sprint(b.Status, entries.Recorded, p.Reviews, p.Queued, p.Running, p.Done, p.Failed, note)
		out.Show(key, line)
		if b.Status != store.BatchSubmitting && p.Remaining() == 0 {
			out.End()
			return p, nil
		}
		select {
		case <-ctx.Done():
			out.End()
			return p, fmt.Errorf("stopped waiting for batch %s (its reviews go on; `reviewfleet batch status %s`): %w", batchID, batchID, ctx.Err())
		case <-t.C:
		}
	}
}
