package llm

import (
	"context"
	"sync"
	"time"
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

// NewLocalLimiter returns a limiter for one worker process: token buckets of
// requestsPerMinute requests and tokensPerMinute tokens, each holding up to
// one minute's worth and refilling continuously; 0 means unlimited. Waiters
// are served in arrival order: each reserves its share when it arrives and
// sleeps until the buckets cover it, so Wait never polls. A request larger
// than a whole minute of tokens is charged one minute's worth.
func NewLocalLimiter(requestsPerMinute, tokensPerMinute int) Limiter {
	return newLocalLimiter(requestsPerMinute, tokensPerMinute, realClock{})
}

func newLocalLimiter(rpm, tpm int, clk clock) *localLimiter {
	now := clk.Now()
	return &localLimiter{clk: clk, req: newBucket(rpm, now), tok: newBucket(tpm, now)}
}

type localLimiter struct {
	clk          clock
	mu           sync.Mutex
	req, tok     *bucket // nil when unlimited
	blockedUntil time.Time
}

// bucket is a token bucket whose level may go negative: the deficit is what
// waiters have reserved ahead of the refill.
type bucket struct {
	perSecond float64
	capacity  float64
	level     float64
	last      time.Time
}

func newBucket(perMinute int, now time.Time) *bucket {
	if perMinute <= 0 {
		return nil
	}
	return &bucket{perSecond: float64(perMinute) / 60, capacity: float64(perMinute), level: float64(perMinute), last: now}
}

// reserve refills the bucket up to now, takes n and returns when the
// balance will be back to zero.
func (b *bucket) reserve(now time.Time, n float64) time.Time {
	if b == nil {
		return now
	}
	if now.After(b.last) {
		b.level = min(b.capacity, b.level+now.Sub(b.last).Seconds()*b.perSecond)
		b.last = now
	}
	b.level -= min(n, b.capacity)
	if b.level >= 0 {
		return now
	}
	return now.Add(time.Duration(-b.level / b.perSecond * float64(time.Second)))
}

// refund gives back an unused reservation of n.
func (b *bucket) refund(n float64) {
	if b != nil {
		b.level = min(b.capacity, b.level+min(n, b.capacity))
	}
}

// drain empties the bucket without touching reservations already made.
func (b *bucket) drain() {
	if b != nil {
		b.level = min(b.level, 0)
	}
}

// Wait reserves one request and tokens and sleeps until both are covered
// and any penalty has passed. On cancellation the reservation is returned.
func (l *localLimiter) Wait(ctx context.Context, tokens int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n := float64(max(tokens, 0))
	l.mu.Lock()
	now := l.clk.Now()
	ready := later(l.req.reserve(now, 1), l.tok.reserve(now, n))
	l.mu.Unlock()
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
			l.mu.Lock()
			l.req.refund(1)
			l.tok.refund(n)
			l.mu.Unlock()
			return ctx.Err()
		}
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
	l.blockedUntil = later(l.blockedUntil, l.clk.Now().Add(d))
	l.req.drain()
	l.tok.drain()
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
