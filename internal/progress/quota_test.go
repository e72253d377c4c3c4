package progress

import (
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
