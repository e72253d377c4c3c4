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
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/githubfake"
	"github.com/reviewfleet/reviewfleet/internal/pullrequest"
	"github.com/reviewfleet/reviewfleet/internal/snapshot"
	"github.com/reviewfleet/reviewfleet/internal/submit"
)

// GITHUB_TOKEN reaches clones of the GitHub the API belongs to, and no
// other host.
func TestGitTokenHosts(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		api, token, host, want string
	}{
		{"https://api.github.com/", "t1", "github.com", "t1"},
		{"", "t1", "github.com", "t1"},
		{"https://api.github.com/", "t1", "gitlab.com", ""},
		{"https://api.github.com/", "t1", "api.github.com", ""},
		{"https://ghe.example.com/api/v3/", " t2\n", "ghe.example.com", "t2"},
		{"https://ghe.example.com/api/v3/", "t2", "github.com", ""},
		{"https://api.github.com/", "", "github.com", ""},
	} {
		c, err := pullrequest.NewClients(config.GitHub{APIURL: tc.api}, tc.token, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.GitToken(ctx, tc.host, "/acme/api.git")
		if err != nil || got != tc.want {
			t.Errorf("api %q, host %s: token %q (%v), want %q", tc.api, tc.host, got, err, tc.want)
		}
	}
}

// A fleet authenticated as a GitHub App clones a private repository with
// the installation token: through the same snapshot cache and submission
// path as every review, against a git server that refuses anyone else.
func TestAppTokenClonesPrivateRepository(t *testing.T) {
	if _, err := githubfake.GitBackend(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	t.Setenv(snapshot.TokenEnv, "")

	// A private repository with two commits.
	root := t.TempDir()
	work := filepath.Join(root, "work")
	runGit(t, "", "init", "-q", "-b", "main", work)
	writeFile(t, filepath.Join(work, "main.go"), "package main\n")
	runGit(t, work, "add", "-A")
	runGit(t, work, "commit", "-q", "-m", "first")
	base := runGit(t, work, "rev-parse", "HEAD")
	writeFile(t, filepath.Join(work, "main.go"), "package main\n\nfunc main() {}\n")
	runGit(t, work, "commit", "-q", "-am", "second")
	head := runGit(t, work, "rev-parse", "HEAD")
	bare := filepath.Join(root, "api.git")
	runGit(t, "", "clone", "-q", "--bare", work, bare)

	// One https host serves the API and the repository, which answers
	// only to the App's installation token.
	gh := githubfake.NewTLS()
	defer gh.Close()
	key, file := appKey(t)
	gh.RequireApp(&key.PublicKey)
	repoURL, err := gh.ServeGit("acme", "api", bare, "")
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(root, "ca.pem")
	writeFile(t, ca, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: gh.Certificate().Raw})))
	t.Setenv("GIT_SSL_CAINFO", ca)

	prepare := func(c *pullrequest.Clients) error {
		cache := &snapshot.Cache{Dir: t.TempDir()}
		if c != nil {
			cache.HostToken = c.GitToken
		}
		nr, err := submit.Prepare(ctx, config.Default(), submit.Request{Repo: repoURL, Base: base, Head: head, Repos: cache})
		if err == nil && (len(nr.Files) != 1 || nr.Files[0].Path != "main.go" || nr.HeadSHA != head) {
			t.Errorf("prepared %d files at %s, want main.go at %s", len(nr.Files), nr.HeadSHA, head)
		}
		return err
	}

	app, err := pullrequest.NewClients(config.GitHub{APIURL: gh.URL, AppID: 99, AppPrivateKeyFile: file}, "", gh.Client())
	if err != nil {
		t.Fatal(err)
	}
	if err := prepare(app); err != nil {
		t.Fatalf("clone with the App's installation token: %v", err)
	}
	served, refused := gh.GitRequests()
	if served == 0 || refused != 0 {
		t.Errorf("the App's clone: %d git requests served, %d refused", served, refused)
	}

	// A contributor's public fork, where the App is not installed, is
	// cloned without credentials; the look-up is not repeated.
	gh.NotInstalled("contributor", "api")
	forkURL, err := gh.ServePublicGit("contributor", "api", bare)
	if err != nil {
		t.Fatal(err)
	}
	cache := &snapshot.Cache{Dir: t.TempDir(), HostToken: app.GitToken}
	for range 2 {
		r, err := cache.Remote(ctx, forkURL)
		if err != nil || r.Token != "" {
			t.Fatalf("the fork's remote: token %q, %v; want none and no error", r.Token, err)
		}
	}
	if _, err := submit.Prepare(ctx, config.Default(), submit.Request{Repo: forkURL, Base: base, Head: head, Repos: cache}); err != nil {
		t.Fatalf("clone the public fork: %v", err)
	}
	lookups := 0
	for _, a := range gh.Auths() {
		if strings.HasPrefix(a, "Bearer ey") { // the App's JWT: installation look-ups and token requests
			lookups++
		}
	}
	if lookups != 3 { // acme/api's look-up and token, the fork's look-up once
		t.Errorf("%d requests with the App's JWT, want 3: look-ups are cached", lookups)
	}

	// Without the App, or with another token, the clone is refused.
	if err := prepare(nil); err == nil {
		t.Error("a clone without credentials succeeded")
	}
	other, _ := pullrequest.NewClients(config.GitHub{APIURL: gh.URL}, "not-the-installation-token", gh.Client())
	if err := prepare(other); err == nil {
		t.Error("a clone with a wrong token succeeded")
	}
	if _, refused := gh.GitRequests(); refused < 2 {
		t.Errorf("the git server refused %d requests, want the two clones without the installation token", refused)
	}
}

func appKey(t *testing.T) (*rsa.PrivateKey, string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "app.pem")
	writeFile(t, file, string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})))
	return key, file
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The App's key is read at its first use: commands that never call GitHub
// run with a configuration naming a key that is not there, and Check
// reports it naming the setting.
func TestAppKeyReadWhenUsed(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent.pem")
	c, err := pullrequest.NewClients(config.GitHub{APIURL: "https://ghe.example.com/api/v3/", AppID: 7, AppPrivateKeyFile: missing}, "", nil)
	if err != nil {
		t.Fatalf("NewClients read the key: %v", err)
	}
	if err := c.Check(); err == nil || !strings.Contains(err.Error(), "github.app_private_key_file") {
		t.Errorf("Check: %v, want an error naming github.app_private_key_file", err)
	}
	if _, err := c.GitToken(context.Background(), "ghe.example.com", "/acme/api.git"); err == nil {
		t.Error("GitToken without the key: no error")
	}
	if _, err := pullrequest.NewClients(config.GitHub{AppID: 7}, "", nil); err == nil {
		t.Error("an App id without a key file was accepted")
	}
}

// Posting looks a repository up again although a clone found the App not
// installed there; an installation removed since it was cached is looked
// up once more, and its repository is then cloned without credentials; a
// look-up that fails for another reason is an error.
func TestAppInstallationCacheFollowsGitHub(t *testing.T) {
	ctx := context.Background()
	gh := githubfake.New()
	defer gh.Close()
	key, file := appKey(t)
	gh.RequireApp(&key.PublicKey)
	gh.SetTokenLifetime(4 * time.Minute) // too short to be reused: every call asks for a token
	c, err := pullrequest.NewClients(config.GitHub{APIURL: gh.URL, AppID: 99, AppPrivateKeyFile: file}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	host := c.GitHost()

	gh.NotInstalled("late", "api")
	if tok, err := c.GitToken(ctx, host, "/late/api.git"); err != nil || tok != "" {
		t.Fatalf("not installed: token %q, %v; want an anonymous clone", tok, err)
	}
	if _, _, err := c.For(ctx, host, "late", "api"); err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Fatalf("For of a repository without the App: %v, want an error", err)
	}
	before := len(gh.Auths())
	if _, _, err := c.For(ctx, host, "late", "api"); err == nil {
		t.Fatal("For succeeded without the App")
	}
	if len(gh.Auths()) == before {
		t.Error("For trusted the cached look-up instead of asking GitHub again")
	}

	if tok, err := c.GitToken(ctx, host, "/acme/api.git"); err != nil || tok != githubfake.InstallationToken {
		t.Fatalf("installed: token %q, %v", tok, err)
	}
	gh.Uninstall()
	before = len(gh.Auths())
	if tok, err := c.GitToken(ctx, host, "/acme/api.git"); err != nil || tok != "" {
		t.Fatalf("after the installation was removed: token %q, %v; want an anonymous clone", tok, err)
	}
	if n := len(gh.Auths()) - before; n != 2 { // the refused token, the look-up again
		t.Errorf("%d requests after the removal, want 2", n)
	}

	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"message": "upstream trouble"}`, http.StatusBadGateway)
	}))
	defer broken.Close()
	c2, _ := pullrequest.NewClients(config.GitHub{APIURL: broken.URL, AppID: 99, AppPrivateKeyFile: file, MaxRetries: 0}, "", nil)
	if _, err := c2.GitToken(ctx, c2.GitHost(), "/acme/api.git"); err == nil || !strings.Contains(err.Error(), "502") {
		t.Errorf("a failing look-up: %v, want the error", err)
	}
}
