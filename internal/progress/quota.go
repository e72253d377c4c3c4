package progress

import (
	"context"
	"fmt"
	"time"
)

// ProviderWaitFunc says how long the provider still asks the fleet to
// wait: a 429's Retry-After, or a quota its headers said is spent (see
// llm.ProviderWait).
type ProviderWaitFunc func(ctx context.Context) time.Duration

// MinQuotaNote is the shortest provider wait worth a note: pauses of a
// fraction of a second are the pacing working, not a stall.
const MinQuotaNote = time.Second

// FleetWaits are what may hold a fleet's calls back; either may be nil.
type FleetWaits struct {
	// Provider: how long the provider still asks the fleet to wait
	// (llm.ProviderWait); nothing ends meanwhile.
	Provider ProviderWaitFunc
	// QuotaBacklog: how long calls now wait for the fleet's shared quota
	// beyond its pacing (llm.QuotaBacklog); the fleet goes on at the
	// quota's pace.
	QuotaBacklog ProviderWaitFunc
}

// Note is the note for what holds the fleet back now: the provider's wait
// (QuotaNote) first, else a quota backlog (BacklogNote); "" for neither.
func (f FleetWaits) Note(ctx context.Context) string {
	if f.Provider != nil {
		if n := QuotaNote(f.Provider(ctx)); n != "" {
			return n
		}
	}
	if f.QuotaBacklog != nil {
		return BacklogNote(f.QuotaBacklog(ctx))
	}
	return ""
}

// BacklogNote is the note for calls waiting d for the fleet's shared
// quota, e.g. "paced by the fleet's quota: calls wait up to 12 s"; "" when
// d is under MinQuotaNote.
func BacklogNote(d time.Duration) string {
	if d < MinQuotaNote {
		return ""
	}
	return fmt.Sprintf("paced by the fleet's quota: calls wait up to %d s", int((d+time.Second-1)/time.Second))
}

// WithProviderWait makes Wait say when the provider asked the fleet to
// wait, and for how long.
func WithProviderWait(f ProviderWaitFunc) Option {
	return func(o *waitOptions) { o.waits.Provider = f }
}

// WithQuotaBacklog makes Wait say when calls wait for the fleet's shared
// quota beyond its pacing.
func WithQuotaBacklog(f ProviderWaitFunc) Option {
	return func(o *waitOptions) { o.waits.QuotaBacklog = f }
}

// QuotaNote is the note for a provider wait of d, e.g. "waiting for the
// provider's quota, resumes in 28 s"; "" when d is under MinQuotaNote.
func QuotaNote(d time.Duration) string {
	if d < MinQuotaNote {
		return ""
	}
	return fmt.Sprintf("waiting for the provider's quota, resumes in %d s", int((d+time.Second-1)/time.Second))
}
