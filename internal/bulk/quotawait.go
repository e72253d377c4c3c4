package bulk

import (
	"context"
	"strings"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/progress"
	"github.com/reviewfleet/reviewfleet/store"
)

// ETAWithWait is ETA when the provider asked the fleet to wait for
// stalled: nothing ends before the wait is over, so the pace so far only
// counts from then on.
func ETAWithWait(p store.BatchProgress, now time.Time, stalled time.Duration) (time.Duration, bool) {
	eta, ok := ETA(p, now)
	if !ok || stalled <= 0 {
		return eta, ok
	}
	return stalled + eta, true
}

// withQuotaWait rewrites a batch's progress line while the provider asks
// the fleet to wait: the ETA counts the wait, and the line says so, e.g.
// "… · ETA 41s · waiting for the provider's quota, resumes in 28 s".
func withQuotaWait(line string, p store.BatchProgress, now time.Time, stalled time.Duration) string {
	note := progress.QuotaNote(stalled)
	if note == "" {
		return line
	}
	if eta, ok := ETAWithWait(p, now, stalled); ok {
		if i := strings.LastIndex(line, " · ETA "); i >= 0 {
			line = line[:i]
		}
		line += " · ETA " + eta.Round(time.Second).String()
	}
	return line + " · " + note
}

// withFleetWaits adds to a batch's line what holds the fleet back while
// reviews remain: the provider's wait, counted in the ETA (withQuotaWait),
// or else a backlog on the fleet's own quota, which the pace so far
// already counts. It returns the line and the note added ("" for none).
func withFleetWaits(ctx context.Context, line string, p store.BatchProgress, now time.Time, waits progress.FleetWaits) (string, string) {
	if p.Remaining() == 0 {
		return line, ""
	}
	var stalled time.Duration
	if waits.Provider != nil {
		stalled = waits.Provider(ctx)
	}
	if note := progress.QuotaNote(stalled); note != "" {
		return withQuotaWait(line, p, now, stalled), note
	}
	if waits.QuotaBacklog == nil {
		return line, ""
	}
	note := progress.BacklogNote(waits.QuotaBacklog(ctx))
	if note == "" {
		return line, ""
	}
	return line + " · " + note, note
}
