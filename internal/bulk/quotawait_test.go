package bulk

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/progress"
	"github.com/reviewfleet/reviewfleet/store"
)

// While the provider asks the fleet to wait, the batch line says so and
// its ETA is at least the wait: a batch stalled for 28 s never shows an
// ETA of 5 s.
func TestQuotaWaitShowsOnTheLineAndInTheETA(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	started := now.Add(-10 * time.Second)
	p := store.BatchProgress{Reviews: 12, Done: 10, Running: 2, FirstStarted: &started} // 1 s per review: ETA 2 s
	plain := Line(store.Batch{}, p, store.EntryCounts{}, now)
	if !strings.HasSuffix(plain, " · ETA 2s") {
		t.Fatalf("line %q: want an ETA of 2s without a wait", plain)
	}
	line := withQuotaWait(plain, p, now, 28*time.Second)
	if !strings.Contains(line, " · ETA 30s · ") || !strings.HasSuffix(line, "waiting for the provider's quota, resumes in 28 s") {
		t.Fatalf("line %q: want the 28 s wait in the ETA and said", line)
	}
	if strings.Count(line, "ETA") != 1 {
		t.Fatalf("line %q shows two ETAs", line)
	}
	// A pause under a second is the pacing at work, not worth a word.
	if got := withQuotaWait(plain, p, now, 300*time.Millisecond); got != plain {
		t.Fatalf("line %q for a 300ms pause, want it unchanged", got)
	}
}

// While a batch is being submitted, its line says how many entries are
// still to submit.
func TestSubmittingLineSaysWhatIsStillToSubmit(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	b := store.Batch{Status: store.BatchSubmitting, Entries: 52}
	p := store.BatchProgress{Reviews: 38, Done: 24, Running: 14}
	line := Line(b, p, store.EntryCounts{Entries: 52, New: 36, Linked: 2, Recorded: 38}, now)
	if !strings.Contains(line, " · submitting: 14 of 52 entries still to submit") {
		t.Fatalf("line %q: want the 14 entries still to submit", line)
	}
	b.Status = store.BatchSubmitted
	if line := Line(b, p, store.EntryCounts{Entries: 52, Recorded: 52}, now); strings.Contains(line, "submit") {
		t.Fatalf("line %q of a submitted batch speaks of submitting", line)
	}
}

// A backlog on the fleet's own quota is said on the batch line but leaves
// the ETA alone (the pace so far counts it); the provider's wait, when
// there is one, is what the line says.
func TestFleetQuotaBacklogShowsOnTheLine(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	started := now.Add(-10 * time.Second)
	p := store.BatchProgress{Reviews: 12, Done: 10, Running: 2, FirstStarted: &started}
	plain := Line(store.Batch{}, p, store.EntryCounts{}, now)
	wait := func(d time.Duration) progress.ProviderWaitFunc {
		return func(context.Context) time.Duration { return d }
	}
	line, _ := withFleetWaits(t.Context(), plain, p, now, progress.FleetWaits{Provider: wait(0), QuotaBacklog: wait(12 * time.Second)})
	if line != plain+" · paced by the fleet's quota: calls wait up to 12 s" {
		t.Fatalf("line %q: want the ETA unchanged and the backlog said", line)
	}
	line, _ = withFleetWaits(t.Context(), plain, p, now, progress.FleetWaits{Provider: wait(28 * time.Second), QuotaBacklog: wait(12 * time.Second)})
	if !strings.HasSuffix(line, "waiting for the provider's quota, resumes in 28 s") || strings.Contains(line, "paced") {
		t.Fatalf("line %q: want the provider's wait alone", line)
	}
	if line, note := withFleetWaits(t.Context(), plain, p, now, progress.FleetWaits{QuotaBacklog: wait(500 * time.Millisecond)}); line != plain || note != "" {
		t.Fatalf("line %q for a half-second wait, want it unchanged", line)
	}
	p.Running, p.Done = 0, 12
	if line, _ := withFleetWaits(t.Context(), plain, p, now, progress.FleetWaits{QuotaBacklog: wait(12 * time.Second)}); line != plain {
		t.Fatalf("line %q of an ended batch speaks of the quota", line)
	}
}
