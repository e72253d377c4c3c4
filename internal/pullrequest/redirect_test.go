package pullrequest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/bulk"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/credscope/credscopetest"
	"github.com/reviewfleet/reviewfleet/internal/pullrequest"
)

// redirectingAPI answers every request with a 302 to the same path on
// target, as a compromised or misconfigured API front could.
func redirectingAPI(t *testing.T, target *credscopetest.HeaderLog) *credscopetest.HeaderLog {
	return credscopetest.NewHeaderLog(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.RequestURI(), http.StatusFound)
	})
}

func answerJSON(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasSuffix(r.URL.Path, "/access_tokens"):
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"token": "inst-token", "expires_at": "2099-01-01T00:00:00Z"}`))
	case strings.HasSuffix(r.URL.Path, "/installation"):
		_, _ = w.Write([]byte(`{"id": 5}`))
	default:
		_, _ = w.Write([]byte(`{"number": 1, "state": "open"}`))
	}
}

// GITHUB_TOKEN, the App's JWT and its installation token reach the
// configured API, and a redirect from it to another origin reaches that
// origin without any of them.
func TestCredentialsDroppedOnRedirectToAnotherOrigin(t *testing.T) {
	ctx := context.Background()

	t.Run("token", func(t *testing.T) {
		other := credscopetest.NewHeaderLog(t, answerJSON)
		api := redirectingAPI(t, other)
		c, err := pullrequest.NewClients(config.GitHub{APIURL: api.URL + "/"}, "ghp-secret-token", nil)
		if err != nil {
			t.Fatal(err)
		}
		gc, _, err := c.For(ctx, "127.0.0.1", "acme", "app")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := gc.PullRequests.Get(ctx, "acme", "app", 1); err != nil {
			t.Fatalf("get through the redirect: %v", err)
		}
		if _, auths := api.Credentials(); len(auths) != 1 || auths[0] != "Bearer ghp-secret-token" {
			t.Errorf("the configured API received %q, want the token once", auths)
		}
		if n, auths := other.Credentials(); n != 1 || len(auths) != 0 {
			t.Errorf("the other origin received %d requests, these with credentials: %q", n, auths)
		}
	})

	t.Run("app", func(t *testing.T) {
		other := credscopetest.NewHeaderLog(t, answerJSON)
		api := redirectingAPI(t, other)
		_, file := appKey(t)
		c, err := pullrequest.NewClients(config.GitHub{APIURL: api.URL + "/", AppID: 42, AppPrivateKeyFile: file}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		// The installation look-up and the token purchase carry the JWT,
		// each redirected; the pull request call carries the token.
		gc, _, err := c.For(ctx, "127.0.0.1", "acme", "app")
		if err != nil {
			t.Fatalf("installation token through the redirect: %v", err)
		}
		if _, _, err := gc.PullRequests.Get(ctx, "acme", "app", 1); err != nil {
			t.Fatal(err)
		}
		n, auths := api.Credentials()
		if n != 3 || len(auths) != 3 || !strings.HasPrefix(auths[0], "Bearer ey") || auths[2] != "Bearer inst-token" {
			t.Errorf("the configured API received %d requests with %q, want the JWT twice and the installation token", n, auths)
		}
		if n, auths := other.Credentials(); n != 3 || len(auths) != 0 {
			t.Errorf("the other origin received %d requests, these with credentials: %q", n, auths)
		}
	})

	t.Run("bulk", func(t *testing.T) {
		other := credscopetest.NewHeaderLog(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`[]`)) })
		api := redirectingAPI(t, other)
		gc, err := bulk.NewGitHubClient(bulk.GitHubOptions{APIURL: api.URL, Token: "ghp-bulk-token"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := gc.Repositories.ListByOrg(ctx, "acme", nil); err != nil {
			t.Fatal(err)
		}
		if _, auths := api.Credentials(); len(auths) != 1 {
			t.Errorf("the configured API received %q, want the token once", auths)
		}
		if n, auths := other.Credentials(); n != 1 || len(auths) != 0 {
			t.Errorf("the other origin received %d requests, these with credentials: %q", n, auths)
		}
	})
}

// A token is sent over https, or over http to a loopback API only.
func TestTokenRefusedOverPlainHTTP(t *testing.T) {
	c, err := pullrequest.NewClients(config.GitHub{APIURL: "http://ghe.example.com/api/v3/"}, "ghp-secret-token", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.For(context.Background(), "ghe.example.com", "acme", "app"); err == nil || !strings.Contains(err.Error(), "https") {
		t.Errorf("a client for a plain-http API with a token: %v, want a refusal naming https", err)
	}
	if _, err := bulk.NewGitHubClient(bulk.GitHubOptions{APIURL: "http://ghe.example.com/api/v3/", Token: "t"}); err == nil {
		t.Error("the bulk client accepted a plain-http API with a token")
	}
	if _, err := bulk.NewGitHubClient(bulk.GitHubOptions{APIURL: "http://ghe.example.com/api/v3/"}); err != nil {
		t.Errorf("without a token a plain-http API is only unsafe for the data: %v", err)
	}
}
