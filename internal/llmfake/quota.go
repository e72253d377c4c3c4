package llmfake

import (
	"context"
	"strconv"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// QuotaStats counts what a Quota handler answered.
type QuotaStats struct {
	mu               sync.Mutex
	accepted, denied int
	acceptedAt       []time.Time
}

// Counts returns the calls accepted and the calls answered 429.
func (s *QuotaStats) Counts() (accepted, denied int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted, s.denied
}

// AcceptedBetween counts the calls accepted in [from, to).
func (s *QuotaStats) AcceptedBetween(from, to time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, t := range s.acceptedAt {
		if !t.Before(from) && t.Before(to) {
			n++
		}
	}
	return n
}

// Quota enforces a provider's request quota as providers do: at most
// limit calls accepted in any sliding window; a call beyond it is answered
// 429 with Retry-After and x-ratelimit-reset-requests saying when the
// oldest call in the window leaves it. Accepted calls go to next, and
// their replies say the quota too: x-ratelimit-limit-requests (the
// limit), x-ratelimit-remaining-requests (what the window has left after
// this call) and x-ratelimit-reset-requests (when the oldest call in the
// window leaves it, freeing a place).
func Quota(limit int, window time.Duration, next Handler) (Handler, *QuotaStats) {
	st := &QuotaStats{}
	return func(ctx context.Context, req openai.ChatCompletionRequest) Reply {
		now := time.Now()
		st.mu.Lock()
		// Calls still inside the window: acceptedAt is in order.
		from := len(st.acceptedAt)
		for i, t := range st.acceptedAt {
			if now.Sub(t) < window {
				from = i
				break
			}
		}
		inWindow := st.acceptedAt[from:]
		if len(inWindow) >= limit {
			st.denied++
			wait := window - now.Sub(inWindow[len(inWindow)-limit])
			st.mu.Unlock()
			r := RateLimited(wait)
			quotaHeaders(r.Headers, limit, 0, wait)
			return r
		}
		st.accepted++
		st.acceptedAt = append(st.acceptedAt, now)
		remaining := limit - len(inWindow) - 1
		reset := window - now.Sub(st.acceptedAt[from])
		st.mu.Unlock()
		r := next(ctx, req)
		if r.Headers == nil {
			r.Headers = map[string]string{}
		}
		quotaHeaders(r.Headers, limit, remaining, reset)
		return r
	}, st
}

// quotaHeaders sets the x-ratelimit-*-requests headers, the reset as
// OpenAI writes it ("6m0s", "1s", "20ms").
func quotaHeaders(h map[string]string, limit, remaining int, reset time.Duration) {
	h["x-ratelimit-limit-requests"] = strconv.Itoa(limit)
	h["x-ratelimit-remaining-requests"] = strconv.Itoa(remaining)
	h["x-ratelimit-reset-requests"] = reset.Round(time.Millisecond).String()
}
