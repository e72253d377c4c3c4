package llm

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/reviewfleet/reviewfleet/internal/metrics"
)

// Limiter paces LLM calls. Wait blocks until a call estimated at tokens may
// start, or ctx is done. Penalize tells the limiter the provider asked for a
// pause of d (a 429 or exhausted rate-limit headers); no call starts before
// it has passed.
type Limiter interface {
	Wait(ctx context.Context, tokens int) error
	Penalize(d time.Duration)
}

// clock is the time source of the local limiter; tests replace it.
type clock interface {
	Now() time.Time
	// NewTimer returns a channel that fires after d and a stop function.
	NewTimer(d time.Duration) (<-chan time.Time, func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// NewLocalLimiter returns a limiter for one worker process: buckets of
// requestsPerMinute requests and tokensPerMinute tokens (golang.org/x/time/rate),
// refilling continuously; 0 means unlimited. The request bucket holds a
// burst of DefaultLocalBurst; the token bucket holds one minute's worth so
// that any request within the quota can pass. See NewLocalLimiterBurst.
func NewLocalLimiter(requestsPerMinute, tokensPerMinute int) Limiter {
	return newLocalLimiter(requestsPerMinute, tokensPerMinute, DefaultLocalBurst, realClock{})
}

// NewLocalLimiterBurst is NewLocalLimiter with the request bucket's burst
// given as a duration of the steady rate (0 = DefaultLocalBurst; at least
// one request). Waiters are served in arrival order: each reserves its
// share when it arrives and sleeps until the buckets cover it, so Wait
// never polls. A request of more tokens than a whole minute's quota fails
// with ErrOverQuota.
func NewLocalLimiterBurst(requestsPerMinute, tokensPerMinute int, burst time.Duration) Limiter {
	if burst <= 0 {
		burst = DefaultLocalBurst
	}
	return newLocalLimiter(requestsPerMinute, tokensPerMinute, burst, realClock{})
}

// DefaultLocalBurst is how far ahead of its steady request rate one
// worker may run.
const DefaultLocalBurst = 2 * time.Second

func newLocalLimiter(rpm, tpm int, burst time.Duration, clk clock) *localLimiter {
	l := &localLimiter{clk: clk, tpm: tpm}
	if rpm > 0 {
		l.req = rate.NewLimiter(rate.Limit(float64(rpm)/60), max(1, int(float64(rpm)*burst.Seconds()/60)))
	}
	if tpm > 0 {
		l.tok = rate.NewLimiter(rate.Limit(float64(tpm)/60), tpm)
	}
	return l
}

type localLimiter struct {
	clk          clock
	tpm          int
	req, tok     *rate.Limiter // nil when unlimited
	mu           sync.Mutex
	blockedUntil time.Time
}

// reserveN reserves n on lim at now; a nil limiter or n <= 0 is free.
func reserveN(lim *rate.Limiter, now time.Time, n int) *rate.Reservation {
	if lim == nil || n <= 0 {
		return nil
	}
	return lim.ReserveN(now, n)
}

func delayOf(r *rate.Reservation, now time.Time) time.Time {
	if r == nil {
		return now
	}
	return now.Add(r.DelayFrom(now))
}

func cancelAt(r *rate.Reservation, now time.Time) {
	if r != nil {
		r.CancelAt(now)
	}
}

// Wait reserves one request and tokens and sleeps until both are covered
// and any penalty has passed. On cancellation the reservation is returned.
func (l *localLimiter) Wait(ctx context.Context, tokens int) error {
	defer metrics.Since(metrics.LimiterWait.WithLabelValues("local"), time.Now())
	if l.tpm > 0 && tokens > l.tpm {
		return fmt.Errorf("worker rate limiter: request of about %d tokens, quota %d per minute (llm.tokens_per_minute): %w",
			tokens, l.tpm, ErrOverQuota)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	now := l.clk.Now()
	rr, tr := reserveN(l.req, now, 1), reserveN(l.tok, now, tokens)
	ready := later(delayOf(rr, now), delayOf(tr, now))
	for {
		l.mu.Lock()
		d := later(ready, l.blockedUntil).Sub(l.clk.Now())
		l.mu.Unlock()
		if d <= 0 {
			return nil
		}
		fired, stop := l.clk.NewTimer(d)
		select {
		case <-fired:
		case <-ctx.Done():
			stop()
			now := l.clk.Now()
			cancelAt(rr, now)
			cancelAt(tr, now)
			return ctx.Err()
		}
	}
}

// Correct charges tokens used beyond the estimate; x/time/rate cannot
// give back part of a reservation, so an overestimate is not refunded.
func (l *localLimiter) Correct(estimated, used int) {
	if extra := min(used, l.tpm) - estimated; l.tok != nil && extra > 0 {
		l.tok.ReserveN(l.clk.Now(), extra)
	}
}

// Penalize blocks new and waiting calls for d and empties the buckets, so
// calls resume at the configured rate rather than in a burst.
func (l *localLimiter) Penalize(d time.Duration) {
	if d <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clk.Now()
	l.blockedUntil = later(l.blockedUntil, now.Add(d))
	for _, lim := range []*rate.Limiter{l.req, l.tok} {
		if lim == nil {
			continue
		}
		// Empty what the bucket holds at the end of the penalty.
		if n := int(lim.TokensAt(l.blockedUntil)); n > 0 {
			lim.ReserveN(now, n)
		}
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Combine returns a limiter that waits on every l in order and passes
// penalties to all of them, such as a worker's local limiter and the
// fleet-wide Redis limiter. Nil limiters are skipped.
func Combine(ls ...Limiter) Limiter {
	var c combined
	for _, l := range ls {
		if l != nil {
			c = append(c, l)
		}
	}
	return c
}

type combined []Limiter

func (c combined) Wait(ctx context.Context, tokens int) error {
	for _, l := range c {
		if err := l.Wait(ctx, tokens); err != nil {
			return err
		}
	}
	return nil
}

func (c combined) Penalize(d time.Duration) {
	for _, l := range c {
		l.Penalize(d)
	}
}

// Corrector is a Limiter that can charge the difference between a call's
// estimated tokens and the usage the provider reported.
type Corrector interface {
	Correct(estimated, used int)
}

// CoolDowner is a Limiter that can hold calls to its endpoint for d after
// the provider answered a permanent authentication or quota error.
type CoolDowner interface {
	CoolDown(d time.Duration, reason string)
}

// Correct passes the correction to every limiter that takes one.
func (c combined) Correct(estimated, used int) {
	for _, l := range c {
		if cr, ok := l.(Corrector); ok {
			cr.Correct(estimated, used)
		}
	}
}

// CoolDown passes the cool-down to every limiter that takes one.
func (c combined) CoolDown(d time.Duration, reason string) {
	for _, l := range c {
		if cd, ok := l.(CoolDowner); ok {
			cd.CoolDown(d, reason)
		}
	}
}
