package client

import (
	"net/http"
	"time"
)

// Client wraps http.Client.
type Client struct {
	HTTP *http.Client
}

// maxAttempts bounds the tries of one request.
const maxAttempts = 3

// Get fetches url, trying again after a pause when the server fails.
func (c *Client) Get(url string) (*http.Response, error) {
	var lastErr error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		resp, err := c.HTTP.Get(url)
		if err == nil && resp.StatusCode < 500 {
			return resp, nil
		}
		if err == nil {
			resp.Body.Close()
			lastErr = &StatusError{Code: resp.StatusCode}
		} else {
			lastErr = err
		}
		time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
	}
	return nil, lastErr
}

// StatusError is a server failure after every attempt.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return http.StatusText(e.Code) }
