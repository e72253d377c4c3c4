// Package httpwait holds what clients of rate-limited HTTP APIs share: how
// long a Retry-After header asks to wait, and a wait that ends with its
// context.
package httpwait

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfter parses a Retry-After value: delay seconds (fractions
// tolerated) or an HTTP date, relative to now. Dates in the past yield
// zero; ok is false for an empty, negative or unreadable value.
func RetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// Sleep waits for d or until ctx is done, whichever comes first, and
// returns ctx's error in the second case.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
