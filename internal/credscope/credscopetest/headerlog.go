// Package credscopetest provides a server that records the credentials it
// is sent, for tests that prove a credential reaches only its own origin.
package credscopetest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// HeaderLog is a test server recording the Authorization header of every
// request it receives, then answering as its handler says.
type HeaderLog struct {
	// URL is the server's base URL.
	URL string

	mu    sync.Mutex
	auths []string
}

// NewHeaderLog starts a HeaderLog answering with h; it stops when the test
// ends.
func NewHeaderLog(t testing.TB, h http.HandlerFunc) *HeaderLog {
	t.Helper()
	l := &HeaderLog{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.auths = append(l.auths, r.Header.Get("Authorization"))
		l.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	l.URL = srv.URL
	return l
}

// Seen returns the Authorization header of each request so far, in order
// ("" for a request without one).
func (l *HeaderLog) Seen() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.auths...)
}

// Credentials returns how many requests arrived and the Authorization
// headers of those that carried one.
func (l *HeaderLog) Credentials() (n int, withAuth []string) {
	seen := l.Seen()
	for _, a := range seen {
		if a != "" {
			withAuth = append(withAuth, a)
		}
	}
	return len(seen), withAuth
}
