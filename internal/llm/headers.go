package llm

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/httpwait"
)

// retryAfter reads how long the server asked the client to wait: the
// retry-after-ms header, then Retry-After (seconds or an HTTP date), then the
// larger of x-ratelimit-reset-requests and x-ratelimit-reset-tokens. ok is
// false when none is present or parseable.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	if d, ok := httpwait.RetryAfter(h.Get("Retry-After"), now); ok {
		return d, true
	}
	req, okReq := parseResetDuration(h.Get("x-ratelimit-reset-requests"))
	tok, okTok := parseResetDuration(h.Get("x-ratelimit-reset-tokens"))
	if !okReq && !okTok {
		return 0, false
	}
	return max(req, tok), true
}

// parseResetDuration parses x-ratelimit-reset-* values such as "1s",
// "6m0s", "20ms" or "1m30.5s"; a bare number is taken as seconds.
func parseResetDuration(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return d, true
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second)), true
	}
	return 0, false
}

// exhaustedFor reports how long the quota stays exhausted according to the
// x-ratelimit-remaining-* headers of a successful reply: when no requests or
// no tokens remain, the matching reset header says when they come back.
func exhaustedFor(h http.Header) time.Duration {
	var d time.Duration
	if noneLeft(h, "x-ratelimit-remaining-requests") {
		if r, ok := parseResetDuration(h.Get("x-ratelimit-reset-requests")); ok {
			d = max(d, r)
		}
	}
	if noneLeft(h, "x-ratelimit-remaining-tokens") {
		if r, ok := parseResetDuration(h.Get("x-ratelimit-reset-tokens")); ok {
			d = max(d, r)
		}
	}
	return d
}

// noneLeft reports whether header name is present and says nothing is left.
func noneLeft(h http.Header, name string) bool {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		return false
	}
	n, err := strconv.Atoi(v)
	return err == nil && n <= 0
}
