package progress

import (
	"context"
	"testing"
	"time"
)

func TestQuotaNoteRoundsTheWaitUp(t *testing.T) {
	t.Parallel()
	cases := map[time.Duration]string{
		0:                      "",
		999 * time.Millisecond: "",
		time.Second:            "waiting for the provider's quota, resumes in 1 s",
		27*time.Second + 100e6: "waiting for the provider's quota, resumes in 28 s",
		45 * time.Second:       "waiting for the provider's quota, resumes in 45 s",
	}
	for d, want := range cases {
		if got := QuotaNote(d); got != want {
			t.Errorf("QuotaNote(%s) = %q, want %q", d, got, want)
		}
	}
}

// The provider's wait is what a review's line says when there is one;
// else a backlog on the fleet's own quota; else nothing.
func TestFleetWaitsSayTheProvidersWaitFirst(t *testing.T) {
	t.Parallel()
	wait := func(d time.Duration) ProviderWaitFunc { return func(context.Context) time.Duration { return d } }
	for _, c := range []struct {
		waits FleetWaits
		want  string
	}{
		{FleetWaits{}, ""},
		{FleetWaits{Provider: wait(28 * time.Second), QuotaBacklog: wait(5 * time.Second)}, "waiting for the provider's quota, resumes in 28 s"},
		{FleetWaits{Provider: wait(0), QuotaBacklog: wait(4500 * time.Millisecond)}, "paced by the fleet's quota: calls wait up to 5 s"},
		{FleetWaits{QuotaBacklog: wait(200 * time.Millisecond)}, ""},
	} {
		if got := c.waits.Note(t.Context()); got != c.want {
			t.Errorf("note %q, want %q", got, c.want)
		}
	}
}
