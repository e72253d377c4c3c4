package llm

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// The endpoint's key is not sent on to a redirect to another origin, not
// even another port of the same host, which Go's own rule allows.
func TestKeyNotForwardedOnRedirect(t *testing.T) {
	var mu sync.Mutex
	var got []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer other.Close()
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer endpoint.Close()
	req, _ := http.NewRequest(http.MethodGet, endpoint.URL+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer sk-secret")
	resp, err := newHTTPClient(time.Minute).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != "" {
		t.Errorf("the other origin received %q, want one request without the key", got)
	}
}
