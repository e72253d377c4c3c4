package snapshot_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/credscope"
	"github.com/reviewfleet/reviewfleet/internal/snapshot"
)

// gitHost serves the bare repositories under root over git's smart HTTP
// protocol, recording the Authorization header of every request. With
// need set it refuses requests without that header value; with redirect
// set it answers every request with a redirect there instead.
type gitHost struct {
	srv      *httptest.Server
	mu       sync.Mutex
	auths    []string
	need     string
	redirect string
}

func newGitHost(t *testing.T, root string) *gitHost {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	h := &gitHost{}
	backend := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h.mu.Lock()
		h.auths = append(h.auths, req.Header.Get("Authorization"))
		need, redirect := h.need, h.redirect
		h.mu.Unlock()
		if redirect != "" {
			http.Redirect(w, req, redirect+req.URL.RequestURI(), http.StatusFound)
			return
		}
		if need != "" && req.Header.Get("Authorization") != need {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, req)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// set changes what the host answers under its lock: its server goroutines
// read the same fields, and the race detector does not count a request over
// a socket as ordering the two.
func (h *gitHost) set(f func(*gitHost)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(h)
}

// seen returns how many requests arrived and how many carried a credential.
func (h *gitHost) seen() (requests, withAuth int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, a := range h.auths {
		if a != "" {
			withAuth++
		}
	}
	return len(h.auths), withAuth
}

// clone clones raw into a fresh cache as a worker would.
func clone(ctx context.Context, c *snapshot.Cache, raw string) error {
	r, err := c.Remote(ctx, raw)
	if err != nil {
		return err
	}
	return c.WithRepo(ctx, r, func(string) error { return nil })
}

// The fleet's git token goes to the host it is configured for and to no
// other: a repository on another host (another port of the same machine,
// the same host named differently) is cloned without it, and a redirect
// from the token's host to another is not followed.
func TestGitTokenStaysWithItsHost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rem := newRemote(t)
	root := filepath.Dir(rem.bare)
	const token = "fleet-t0ken-5e1f"
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	home := newGitHost(t, root)
	home.set(func(h *gitHost) { h.need = basic })
	other := newGitHost(t, root)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	worker := func() *snapshot.Cache {
		return &snapshot.Cache{Dir: t.TempDir(), TokenFile: tokenFile, TokenScopes: credscope.Set{credscope.MustParse(home.srv.URL)}}
	}

	if err := clone(ctx, worker(), home.srv.URL+"/repo.git"); err != nil {
		t.Fatalf("clone from the token's own host: %v", err)
	}
	if n, auth := home.seen(); n == 0 || auth == 0 {
		t.Fatalf("the token's host saw %d requests, %d with a credential: the token never reached it", n, auth)
	}

	if err := clone(ctx, worker(), other.srv.URL+"/repo.git"); err != nil {
		t.Fatalf("anonymous clone from another host: %v", err)
	}
	n, auth := other.seen()
	if n == 0 {
		t.Fatal("the other host saw no request")
	}
	if auth != 0 {
		t.Errorf("the other host received a credential on %d of its %d requests", auth, n)
	}
	t.Logf("other host: %d requests, %d with Authorization", n, auth)

	// The same machine named otherwise is another host too.
	hu, err := url.Parse(home.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	port := hu.Port()
	homeBefore, _ := home.seen()
	if err := clone(ctx, worker(), "http://localhost:"+port+"/repo.git"); err == nil {
		t.Error("cloning the token's host as localhost succeeded: a credential went with it")
	}
	if n, _ := home.seen(); n == homeBefore {
		t.Fatal("the localhost clone never reached the server")
	}

	// The token's host redirects to the other one: git does not follow
	// with the credential, and the other host receives none.
	redirecting := newGitHost(t, root)
	redirecting.set(func(h *gitHost) { h.redirect = other.srv.URL })
	c := &snapshot.Cache{Dir: t.TempDir(), TokenFile: tokenFile, TokenScopes: credscope.Set{credscope.MustParse(redirecting.srv.URL)}}
	_ = clone(ctx, c, redirecting.srv.URL+"/repo.git")
	if n, auth := redirecting.seen(); n == 0 || auth == 0 {
		t.Fatalf("the redirecting host saw %d requests, %d with the credential", n, auth)
	}
	if n2, auth := other.seen(); auth != 0 {
		t.Errorf("after a redirect the other host received a credential on %d of %d requests", auth, n2)
	}
}
