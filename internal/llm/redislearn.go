package llm

import (
	"context"
	"sync"
	"time"
)

// learnedTTL is how long a learned quota is kept in Redis after the last
// reply that stated it: a provider that stopped sending headers, or a key
// no longer used, leaves nothing behind.
const learnedTTL = 10 * time.Minute

// learnedRefresh is how often a worker rewrites an unchanged learned
// quota, so it outlives learnedTTL while replies keep stating it.
const learnedRefresh = time.Minute

// learnedRates is what one worker knows of a learned quota.
type learnedRates struct {
	mu       sync.Mutex
	rpm, tpm int // paced rates (LearnedShare of the provider's limits)
	written  time.Time
}

func (r *learnedRates) get() (rpm, tpm int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rpm, r.tpm
}

// set records the rates and reports whether Redis must be told: they
// changed, or were last written more than learnedRefresh ago.
func (r *learnedRates) set(rpm, tpm int, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rpm == r.rpm && tpm == r.tpm && now.Sub(r.written) < learnedRefresh {
		return false
	}
	r.rpm, r.tpm, r.written = rpm, tpm, now
	return true
}

// Learn takes the limits a reply of the provider stated. Without a
// configured quota, the stated quota becomes the fleet's pace, shared
// through Redis. Either way, what the provider says remains bounds how
// many calls may start at once: a limiter that thought it had a burst in
// hand, after a restart or beside another user of the same key, holds
// back instead of meeting 429s. Best effort, as Penalize.
func (l *redisLimiter) Learn(p ProviderLimits) {
	if !p.Known() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	if l.learn && (p.RequestsPerMinute > 0 || p.TokensPerMinute > 0) {
		rpm, tpm := learnedRate(p.RequestsPerMinute), learnedRate(p.TokensPerMinute)
		if l.learned.set(rpm, tpm, time.Now()) {
			pipe := l.rdb.TxPipeline()
			pipe.HSet(ctx, l.keys[4], "req", interval(rpm), "tok", interval(tpm))
			pipe.PExpire(ctx, l.keys[4], learnedTTL)
			_, _ = pipe.Exec(ctx)
		}
	}
	rpm, tpm := l.rates()
	if p.HasRemainingRequests && rpm > 0 && l.lowRemaining(p.RemainingRequests, rpm) {
		_ = syncScript.Run(ctx, l.rdb, l.keys[:1], p.RemainingRequests, interval(rpm), l.tolerance.Microseconds()).Err()
	}
	if p.HasRemainingTokens && tpm > 0 && l.lowRemaining(p.RemainingTokens, tpm) {
		_ = syncScript.Run(ctx, l.rdb, l.keys[1:2], p.RemainingTokens, interval(tpm), l.tolerance.Microseconds()).Err()
	}
}

// lowRemaining reports whether remaining units of a quota of perMinute
// are fewer than two bursts: only then can the provider's count and the
// limiter's differ enough to matter, and a Redis round trip pay.
func (l *redisLimiter) lowRemaining(remaining, perMinute int) bool {
	burst := l.tolerance.Seconds() * float64(perMinute) / 60
	return float64(remaining) < 2*burst+1
}
