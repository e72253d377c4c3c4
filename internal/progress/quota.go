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

// WithProviderWait makes Wait say when the provider asked the fleet to
// wait, and for how long.
func WithProviderWait(f ProviderWaitFunc) Option {
	return func(o *waitOptions) { o.providerWait = f }
}

// QuotaNote is the note for a provider wait of d, e.g. "waiting for the
// provider's quota, resumes in 28 s"; "" when d is under MinQuotaNote.
func QuotaNote(d time.Duration) string {
	if d < MinQuotaNote {
		return ""
	}
	return fmt.Sprintf("waiting for the provider's quota, resumes in %d s", int((d+time.Second-1)/time.Second))
}
