package llm

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		headers map[string]string
		want    time.Duration
		ok      bool
	}{
		{"none", nil, 0, false},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second, true},
		{"fractional seconds", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond, true},
		{"http date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second, true},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0, false},
		{"negative", map[string]string{"Retry-After": "-3"}, 0, false},
		{"ms wins", map[string]string{"retry-after-ms": "250", "Retry-After": "1"}, 250 * time.Millisecond, true},
		{"reset requests", map[string]string{"x-ratelimit-reset-requests": "20ms"}, 20 * time.Millisecond, true},
		{"reset max of both", map[string]string{"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s"}, 6 * time.Minute, true},
		{"reset compound", map[string]string{"x-ratelimit-reset-tokens": "1m30.5s"}, 90*time.Second + 500*time.Millisecond, true},
		{"reset bare number", map[string]string{"x-ratelimit-reset-tokens": "3"}, 3 * time.Second, true},
		{"retry-after beats reset", map[string]string{"Retry-After": "2", "x-ratelimit-reset-tokens": "6m0s"}, 2 * time.Second, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for k, v := range tc.headers {
				h.Set(k, v)
			}
			got, ok := retryAfter(h, now)
			if got != tc.want || ok != tc.ok {
				t.Errorf("retryAfter = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestExhaustedFor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		headers map[string]string
		want    time.Duration
	}{
		{"plenty left", map[string]string{"x-ratelimit-remaining-requests": "10", "x-ratelimit-reset-requests": "5s"}, 0},
		{"no requests left", map[string]string{"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "5s"}, 5 * time.Second},
		{"no tokens left", map[string]string{"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "250ms"}, 250 * time.Millisecond},
		{"headers absent", nil, 0},
	}
	for _, tc := range cases {
		h := http.Header{}
		for k, v := range tc.headers {
			h.Set(k, v)
		}
		if got := exhaustedFor(h); got != tc.want {
			t.Errorf("%s: exhaustedFor = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestErrorClassification(t *testing.T) {
	t.Parallel()
	api := func(code int) error {
		return fmt.Errorf("call: %w", &openai.APIError{HTTPStatusCode: code, Message: "x"})
	}
	cases := []struct {
		name      string
		err       error
		permanent bool
		limited   bool
	}{
		{"nil", nil, false, false},
		{"budget", fmt.Errorf("reserve: %w", ErrBudgetExceeded), true, false},
		{"invalid reply", fmt.Errorf("structured: %w", &InvalidReplyError{Reason: "bad"}), true, false},
		{"invalid request", ErrInvalidRequest, true, false},
		{"400", api(400), true, false},
		{"403", &openai.RequestError{HTTPStatusCode: 403}, true, false},
		{"408", api(408), false, false},
		{"409", api(409), false, false},
		{"429 raw", api(429), false, false},
		{"rate limit", &RateLimitError{RetryAfter: time.Second, Err: api(429)}, false, true},
		{"500", api(500), false, false},
		{"network", errors.New("connection reset"), false, false},
	}
	for _, tc := range cases {
		if got := IsPermanent(tc.err); got != tc.permanent {
			t.Errorf("%s: IsPermanent = %v", tc.name, got)
		}
		if _, got := IsRateLimited(tc.err); got != tc.limited {
			t.Errorf("%s: IsRateLimited = %v", tc.name, got)
		}
	}
}
