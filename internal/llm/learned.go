package llm

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ProviderLimits is what a provider's rate-limit headers said about the
// quota of the endpoint and key a reply came from. A field is 0 (or ok
// false) when its header was missing or unreadable.
type ProviderLimits struct {
	// RequestsPerMinute and TokensPerMinute are the quota
	// (x-ratelimit-limit-requests, x-ratelimit-limit-tokens).
	RequestsPerMinute, TokensPerMinute int
	// RemainingRequests and RemainingTokens are what is left now
	// (x-ratelimit-remaining-*); HasRemaining* say whether they were sent.
	RemainingRequests, RemainingTokens       int
	HasRemainingRequests, HasRemainingTokens bool
	// ResetRequests and ResetTokens are when the quota is whole again
	// (x-ratelimit-reset-*, such as "6m0s", "1s" or "20ms").
	ResetRequests, ResetTokens time.Duration
}

// Known reports whether the headers said anything about the quota.
func (p ProviderLimits) Known() bool {
	return p.RequestsPerMinute > 0 || p.TokensPerMinute > 0 || p.HasRemainingRequests || p.HasRemainingTokens
}

// parseProviderLimits reads the x-ratelimit-* headers of a reply. Values
// that are not numbers, or are negative, are left out: a header is the
// provider's word, not something to fail a call over.
func parseProviderLimits(h http.Header) ProviderLimits {
	var p ProviderLimits
	if h == nil {
		return p
	}
	p.RequestsPerMinute, _ = headerInt(h, "x-ratelimit-limit-requests")
	p.TokensPerMinute, _ = headerInt(h, "x-ratelimit-limit-tokens")
	p.RemainingRequests, p.HasRemainingRequests = headerInt(h, "x-ratelimit-remaining-requests")
	p.RemainingTokens, p.HasRemainingTokens = headerInt(h, "x-ratelimit-remaining-tokens")
	p.ResetRequests, _ = parseResetDuration(h.Get("x-ratelimit-reset-requests"))
	p.ResetTokens, _ = parseResetDuration(h.Get("x-ratelimit-reset-tokens"))
	return p
}

// headerInt reads a non-negative integer header.
func headerInt(h http.Header, name string) (int, bool) {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// Learner is a Limiter that paces itself from the limits a provider
// reports with every reply (see NewRedisLimiterBurst: a fleet limiter with
// no configured quota learns it).
type Learner interface {
	Learn(p ProviderLimits)
}

// Learn passes the provider's limits to every limiter that learns them.
func (c combined) Learn(p ProviderLimits) {
	for _, l := range c {
		if lr, ok := l.(Learner); ok {
			lr.Learn(p)
		}
	}
}

// LearnedShare is the part of a learned quota the fleet paces itself to:
// the rest absorbs the calls sent before the first reply taught the
// limit, and clocks that differ between the provider and Redis.
const LearnedShare = 0.97

// learnedRate is the per-minute rate paced for a learned limit.
func learnedRate(limit int) int {
	if limit <= 0 {
		return 0
	}
	return max(1, int(float64(limit)*LearnedShare))
}
