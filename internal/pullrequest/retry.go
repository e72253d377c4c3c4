package pullrequest

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/httpwait"
)

// retryTransport retries requests GitHub answers with a secondary rate
// limit — 403 or 429 with a Retry-After header — after waiting as long as
// it says, at most max times and never longer than maxWait at once.
type retryTransport struct {
	base    http.RoundTripper
	max     int
	maxWait time.Duration
	// sleep waits d or until ctx ends (tests replace it).
	sleep func(ctx context.Context, d time.Duration) error
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 && req.Body != nil {
			if req.GetBody == nil {
				return nil, errNoReplay
			}
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r = req.Clone(req.Context())
			r.Body = body
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil || attempt >= t.max {
			return resp, err
		}
		wait, ok := secondaryLimit(resp)
		if !ok || wait > t.maxWait {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

type replayError struct{}

func (replayError) Error() string {
	return "github: a rate-limited request's body cannot be sent again"
}

var errNoReplay = replayError{}

// secondaryLimit reports whether resp is a secondary rate limit and how
// long it asks to wait.
func secondaryLimit(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return 0, false
	}
	return httpwait.RetryAfter(resp.Header.Get("Retry-After"), time.Now())
}
