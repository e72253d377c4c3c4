package llm

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

var (
	// ErrNotConfigured is returned by New when no endpoint is configured.
	ErrNotConfigured = errors.New("LLM endpoint not configured: set OPENAI_BASE_URL (and OPENAI_API_KEY if the endpoint needs one)")
	// ErrBudgetExceeded is wrapped by Budget implementations when a review
	// has spent its calls or tokens. It is permanent for the current review.
	ErrBudgetExceeded = errors.New("LLM budget exceeded")
	// ErrInvalidRequest marks a request the client refuses to send (missing
	// model, unusable schema, parameters the model does not accept).
	ErrInvalidRequest = errors.New("invalid LLM request")
)

// DefaultRateLimitDelay is RateLimitError.RetryAfter when the server sent a
// 429 without any hint of when to come back.
const DefaultRateLimitDelay = 5 * time.Second

// RateLimitError is returned when the endpoint kept answering 429 Too Many
// Requests, or asked for a pause longer than Config.MaxRetryWait.
type RateLimitError struct {
	// RetryAfter is how long the server asked to wait (Retry-After,
	// retry-after-ms or x-ratelimit-reset-*), or DefaultRateLimitDelay.
	RetryAfter time.Duration
	// Err is the underlying API error.
	Err error
}

// Error says how long to wait and why.
func (e *RateLimitError) Error() string {
	return fmt.Sprintf("rate limited, retry after %s: %v", e.RetryAfter, e.Err)
}

// Unwrap returns the underlying API error.
func (e *RateLimitError) Unwrap() error { return e.Err }

// InvalidReplyError is returned by Structured when the reply could not be
// extracted, validated or decoded, even after the repair attempt.
type InvalidReplyError struct {
	Reason string // what was wrong with the last reply
	Raw    string // the last reply's content, verbatim
}

// Error returns the reason; the raw reply is left out because it can be long.
func (e *InvalidReplyError) Error() string {
	return "invalid LLM reply: " + e.Reason
}

// IsRateLimited reports whether err is (or wraps) a RateLimitError and how
// long to wait before retrying. It suits asynq's IsFailure and
// RetryDelayFunc: a rate-limited task should be retried later without
// counting as a failure.
func IsRateLimited(err error) (time.Duration, bool) {
	var rl *RateLimitError
	if errors.As(err, &rl) {
		return rl.RetryAfter, true
	}
	return 0, false
}

// IsPermanent reports whether retrying the same call cannot help: the budget
// is spent, the reply stayed invalid after repair, the request was refused
// locally, or the server answered 4xx other than 408, 409 and 429.
func IsPermanent(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrBudgetExceeded) || errors.Is(err, ErrInvalidRequest) || errors.Is(err, ErrNotConfigured) ||
		errors.Is(err, ErrOverQuota) {
		return true
	}
	var cool *CoolDownError
	if errors.As(err, &cool) {
		return true
	}
	var inv *InvalidReplyError
	if errors.As(err, &inv) || QuotaExhausted(err) {
		return true
	}
	if _, ok := IsRateLimited(err); ok {
		return false
	}
	code := statusCode(err)
	return code >= 400 && code < 500 && !retryableStatus(code)
}

// statusCode extracts the HTTP status from a go-openai error, or 0.
// StatusCode returns the HTTP status of an error the endpoint answered
// with (0 when err came from elsewhere).
func StatusCode(err error) int { return statusCode(err) }

func statusCode(err error) int {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.HTTPStatusCode
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		return reqErr.HTTPStatusCode
	}
	return 0
}

// retryableStatus reports whether another attempt may succeed after code.
func retryableStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests:
		return true
	}
	return code >= 500
}

// EndpointError wraps the error a call ends with once a request reached
// the endpoint: the provider's reply (4xx, 5xx, 429) or the network on the
// way to it. It lets callers tell the provider's failures from their own
// infrastructure's (a budget kept in a database that is down).
type EndpointError struct{ Err error }

// Error returns the wrapped error's message.
func (e *EndpointError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *EndpointError) Unwrap() error { return e.Err }

// IsEndpoint reports whether err came from the endpoint (see EndpointError).
func IsEndpoint(err error) bool {
	var e *EndpointError
	return errors.As(err, &e)
}

// QuotaExhausted reports a provider saying the account's quota or credit
// is spent (OpenAI answers 429 with code insufficient_quota): waiting does
// not help, unlike a rate limit.
func QuotaExhausted(err error) bool {
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	code, _ := apiErr.Code.(string)
	return code == "insufficient_quota" || apiErr.Type == "insufficient_quota"
}
