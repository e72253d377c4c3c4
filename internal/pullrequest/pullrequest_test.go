package pullrequest_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/githubfake"
	"github.com/reviewfleet/reviewfleet/internal/pullrequest"
	"github.com/reviewfleet/reviewfleet/store"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want store.PullRequest
		ok   bool
	}{
		{"https://github.com/acme/api/pull/7", store.PullRequest{Host: "github.com", Owner: "acme", Repo: "api", Number: 7}, true},
		{"https://GHE.example.com/acme/api/pull/12/files", store.PullRequest{Host: "ghe.example.com", Owner: "acme", Repo: "api", Number: 12}, true},
		{"https://github.com/acme/api/issues/7", store.PullRequest{}, false},
		{"https://github.com/acme/api/pull/x", store.PullRequest{}, false},
		{"https://github.com/acme/api/pull/0", store.PullRequest{}, false},
		{"acme/api#7", store.PullRequest{}, false},
	} {
		got, err := pullrequest.ParseURL(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestAPIURLFor(t *testing.T) {
	for _, tc := range []struct{ configured, host, want string }{
		{"", "github.com", pullrequest.DefaultAPIURL},
		{pullrequest.DefaultAPIURL, "github.com", pullrequest.DefaultAPIURL},
		{pullrequest.DefaultAPIURL, "ghe.example.com", ""}, // refused: the token would go where the URL says
		{"", "evil.example", ""},
		{"https://ghe.example.com/api/v3/", "ghe.example.com", "https://ghe.example.com/api/v3/"},
		{"http://127.0.0.1:9/", "github.com", "http://127.0.0.1:9/"},
	} {
		got, err := pullrequest.APIURLFor(tc.configured, tc.host)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("APIURLFor(%q, %q) = %q, %v; want %q", tc.configured, tc.host, got, err, tc.want)
		}
	}
}

func TestGetReadsForkPullRequest(t *testing.T) {
	gh := githubfake.New(githubfake.PR{Owner: "acme", Repo: "api", Number: 3, Title: "T", Body: "B", BaseSHA: "b1", HeadSHA: "h1",
		BaseCloneURL: "https://example.invalid/acme/api.git", HeadCloneURL: "https://example.invalid/fork/api.git",
		Files: []githubfake.File{{Path: "x.go", Patch: "@@ -1 +1 @@\n-a\n+b"}}})
	defer gh.Close()
	c, err := pullrequest.NewClients(config.GitHub{APIURL: gh.URL}, "tok", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id := store.PullRequest{Host: "github.com", Owner: "acme", Repo: "api", Number: 3}
	gc, lock, err := c.For(ctx, id.Host, id.Owner, id.Repo)
	if err != nil {
		t.Fatal(err)
	}
	info, err := pullrequest.Get(ctx, gc, id)
	if err != nil {
		t.Fatal(err)
	}
	req := pullrequest.Request(info)
	if info.BaseSHA != "b1" || info.HeadSHA != "h1" || req.Repo != "https://example.invalid/acme/api.git" ||
		req.HeadRepo != "https://example.invalid/fork/api.git" || req.Purpose != "T\n\nB" {
		t.Fatalf("info %+v, request %+v", info, req)
	}
	if lock != "github-writer:github.com/acme" {
		t.Errorf("lock %q", lock)
	}
	if auths := gh.Auths(); len(auths) == 0 || auths[0] != "Bearer tok" {
		t.Errorf("authorization %v, want the token", auths)
	}
}

func TestAppInstallationToken(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "app.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(file, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	gh := githubfake.New(githubfake.PR{Owner: "acme", Repo: "api", Number: 1, BaseSHA: "b", HeadSHA: "h", BaseCloneURL: "u", HeadCloneURL: "u"})
	defer gh.Close()
	gh.RequireApp(&key.PublicKey)
	c, err := pullrequest.NewClients(config.GitHub{APIURL: gh.URL, AppID: 99, AppPrivateKeyFile: file}, "ignored", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	gc, lock, err := c.For(ctx, "github.com", "acme", "api")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pullrequest.Get(ctx, gc, store.PullRequest{Host: "github.com", Owner: "acme", Repo: "api", Number: 1}); err != nil {
		t.Fatalf("read with the installation token: %v", err)
	}
	if lock != "github-writer:github.com:installation:42" {
		t.Errorf("lock %q, want one per installation", lock)
	}
	// The installation and its token are cached: a second client asks
	// GitHub for neither.
	before := len(gh.Auths())
	if _, _, err := c.For(ctx, "github.com", "acme", "api"); err != nil {
		t.Fatal(err)
	}
	if n := len(gh.Auths()) - before; n != 0 {
		t.Errorf("%d requests for a second client, want 0 (installation and token are cached)", n)
	}

	// A key the fake does not know is refused.
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	gh.RequireApp(&other.PublicKey)
	c2, _ := pullrequest.NewClients(config.GitHub{APIURL: gh.URL, AppID: 99, AppPrivateKeyFile: file}, "", nil)
	if _, _, err := c2.For(ctx, "github.com", "acme", "api"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("a JWT signed by the wrong key: %v, want 401", err)
	}
}

func TestRetryIsBounded(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	var waits []time.Duration
	c, _ := pullrequest.NewClients(config.GitHub{APIURL: srv.URL, MaxRetries: 2, MaxRetryWait: time.Minute}, "", nil)
	c.WithSleep(func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil })
	gc, _, _ := c.For(context.Background(), "github.com", "o", "r")
	_, err := pullrequest.Get(context.Background(), gc, store.PullRequest{Owner: "o", Repo: "r", Number: 1})
	if err == nil || calls.Load() != 3 || len(waits) != 2 || waits[0] != 2*time.Second {
		t.Fatalf("err %v after %d calls and waits %v; want an error after 3 calls and 2 waits of 2s", err, calls.Load(), waits)
	}

	// A wait longer than max_retry_wait is not waited for.
	calls.Store(0)
	waits = nil
	c3, _ := pullrequest.NewClients(config.GitHub{APIURL: srv.URL, MaxRetries: 2, MaxRetryWait: time.Second}, "", nil)
	c3.WithSleep(func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil })
	gc3, _, _ := c3.For(context.Background(), "github.com", "o", "r")
	if _, err := pullrequest.Get(context.Background(), gc3, store.PullRequest{Owner: "o", Repo: "r", Number: 1}); err == nil || calls.Load() != 1 || len(waits) != 0 {
		t.Fatalf("err %v, %d calls, waits %v; want one call and no wait", err, calls.Load(), waits)
	}
}
