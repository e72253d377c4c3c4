package pullrequest

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v84/github"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/httpwait"
)

// Clients builds API clients for repositories: with a token
// (GITHUB_TOKEN), or as a GitHub App with an installation token per
// installation, cached until shortly before it expires.
type Clients struct {
	cfg    config.GitHub
	token  string
	client *http.Client

	keyOnce sync.Once
	key     *rsa.PrivateKey // the App's, read at first use
	keyErr  error

	mu       sync.Mutex
	tokens   map[string]*github.InstallationToken // by API URL and installation id
	installs map[string]installation              // by API URL and owner/repo
	logins   map[string]string                    // Identity by host
	// sleep replaces the wait between rate-limited attempts (tests).
	sleep func(ctx context.Context, d time.Duration) error
}

// installation is a repository's App installation as last looked up: id
// 0 when the App is not installed there.
type installation struct {
	id    int64
	until time.Time
}

// How long a repository's installation look-up is reused: an App being
// installed on a repository shows within the shorter time.
const (
	installedFor    = time.Hour
	notInstalledFor = 10 * time.Minute
)

// errNotInstalled: the App is not installed on the repository.
var errNotInstalled = errors.New("the GitHub App is not installed on the repository")

// NewClients returns clients acting with token, or as the configured
// GitHub App (token may be empty for public repositories). The App's
// private key is read at its first use, so commands that never call
// GitHub work without it; Check reads it at once. hc is the HTTP client
// underneath (nil: http.DefaultClient's transport).
func NewClients(cfg config.GitHub, token string, hc *http.Client) (*Clients, error) {
	if (cfg.AppID != 0) != (cfg.AppPrivateKeyFile != "") {
		return nil, errors.New("github: a GitHub App needs both app_id and app_private_key_file")
	}
	return &Clients{cfg: cfg, token: token, client: hc, tokens: map[string]*github.InstallationToken{},
		installs: map[string]installation{}, logins: map[string]string{}, sleep: httpwait.Sleep}, nil
}

// Check reads the GitHub App's private key when an App is configured, so
// that a command about to use GitHub fails at its start on a missing or
// unreadable key.
func (c *Clients) Check() error {
	_, err := c.appKey()
	return err
}

// appKey is the App's private key, or nil when no App is configured.
func (c *Clients) appKey() (*rsa.PrivateKey, error) {
	if c.cfg.AppPrivateKeyFile == "" {
		return nil, nil
	}
	c.keyOnce.Do(func() {
		pemBytes, err := os.ReadFile(c.cfg.AppPrivateKeyFile)
		if err != nil {
			c.keyErr = fmt.Errorf("read the GitHub App private key (github.app_private_key_file): %w", err)
			return
		}
		c.key, c.keyErr = ParsePrivateKey(pemBytes)
	})
	return c.key, c.keyErr
}

// WithSleep replaces how the clients wait before retrying a rate-limited
// request (tests).
func (c *Clients) WithSleep(fn func(ctx context.Context, d time.Duration) error) *Clients {
	c.sleep = fn
	return c
}

// ParsePrivateKey reads an RSA key in PEM (PKCS#1, as GitHub issues it, or
// PKCS#8).
func ParsePrivateKey(data []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("github app private key: no PEM block")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("github app private key: %w", err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("github app private key: not an RSA key")
	}
	return rk, nil
}

// newClient is a client of the API at apiURL authenticated by token.
func (c *Clients) newClient(apiURL, token string) (*github.Client, error) {
	base := http.DefaultTransport
	if c.client != nil && c.client.Transport != nil {
		base = c.client.Transport
	}
	hc := &http.Client{Transport: &retryTransport{base: base, max: c.cfg.MaxRetries, maxWait: c.cfg.MaxRetryWait, sleep: c.sleep}}
	if c.client != nil {
		hc.Timeout = c.client.Timeout
	}
	gc := github.NewClient(hc)
	if token != "" {
		gc = gc.WithAuthToken(token)
	}
	if !strings.HasSuffix(apiURL, "/") {
		apiURL += "/"
	}
	u, err := url.Parse(apiURL)
	if err != nil {
		return nil, fmt.Errorf("github api url %q: %w", apiURL, err)
	}
	gc.BaseURL = u
	return gc, nil
}

// For returns a client for owner/repo on host and the name of the lock
// that serialises writes through its installation (one writer per
// installation: GitHub's secondary limits count per installation).
func (c *Clients) For(ctx context.Context, host, owner, repo string) (*github.Client, string, error) {
	apiURL, err := APIURLFor(c.cfg.APIURL, host)
	if err != nil {
		return nil, "", err
	}
	key, err := c.appKey()
	if err != nil {
		return nil, "", err
	}
	if key == nil {
		gc, err := c.newClient(apiURL, c.token)
		return gc, "github-writer:" + host + "/" + strings.ToLower(owner), err
	}
	tok, id, err := c.installationToken(ctx, key, apiURL, owner, repo)
	if err != nil {
		return nil, "", err
	}
	gc, err := c.newClient(apiURL, tok)
	return gc, fmt.Sprintf("github-writer:%s:installation:%d", host, id), err
}

// installationToken is the App's token for the installation that covers
// owner/repo (or the configured one), cached until five minutes before it
// expires. It wraps errNotInstalled when the App is not installed there.
func (c *Clients) installationToken(ctx context.Context, key *rsa.PrivateKey, apiURL, owner, repo string) (string, int64, error) {
	jwt, err := AppJWT(c.cfg.AppID, key, time.Now())
	if err != nil {
		return "", 0, err
	}
	appClient, err := c.newClient(apiURL, jwt)
	if err != nil {
		return "", 0, err
	}
	id, err := c.installationID(ctx, appClient, apiURL, owner, repo)
	if err != nil {
		return "", 0, err
	}
	tokenKey := fmt.Sprintf("%s#%d", apiURL, id)
	c.mu.Lock()
	tok := c.tokens[tokenKey]
	c.mu.Unlock()
	if tok == nil || time.Until(tok.GetExpiresAt().Time) < 5*time.Minute {
		if tok, _, err = appClient.Apps.CreateInstallationToken(ctx, id, nil); err != nil {
			return "", 0, fmt.Errorf("create a token for GitHub App installation %d: %w", id, err)
		}
		c.mu.Lock()
		c.tokens[tokenKey] = tok
		c.mu.Unlock()
	}
	return tok.GetToken(), id, nil
}

// installationID is the configured installation, or the one GitHub names
// for owner/repo, looked up again after installedFor (notInstalledFor when
// the App was not installed there).
func (c *Clients) installationID(ctx context.Context, appClient *github.Client, apiURL, owner, repo string) (int64, error) {
	if c.cfg.InstallationID != 0 {
		return c.cfg.InstallationID, nil
	}
	k := apiURL + " " + strings.ToLower(owner+"/"+repo)
	c.mu.Lock()
	in, ok := c.installs[k]
	c.mu.Unlock()
	if !ok || time.Now().After(in.until) {
		inst, _, err := appClient.Apps.FindRepositoryInstallation(ctx, owner, repo)
		var ge *github.ErrorResponse
		switch {
		case errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == http.StatusNotFound:
			in = installation{until: time.Now().Add(notInstalledFor)}
		case err != nil:
			return 0, fmt.Errorf("find the GitHub App installation of %s/%s: %w", owner, repo, err)
		default:
			in = installation{id: inst.GetID(), until: time.Now().Add(installedFor)}
		}
		c.mu.Lock()
		c.installs[k] = in
		c.mu.Unlock()
	}
	if in.id == 0 {
		return 0, fmt.Errorf("find the GitHub App installation of %s/%s: %w", owner, repo, errNotInstalled)
	}
	return in.id, nil
}

// GitHost is the host that serves the git repositories of the configured
// GitHub: github.com for api.github.com, the API's own host for GitHub
// Enterprise.
func (c *Clients) GitHost() string {
	api := c.cfg.APIURL
	if api == "" {
		api = DefaultAPIURL
	}
	u, err := url.Parse(api)
	if err != nil || u.Host == "" {
		return ""
	}
	host := strings.ToLower(u.Host)
	if host == "api.github.com" {
		host = "github.com"
	}
	return host
}

// GitToken is the credential for cloning repoPath ("/OWNER/REPO.git") over
// https from host: GITHUB_TOKEN, or the GitHub App's installation token
// for that repository. Hosts other than the configured GitHub's get ""
// (the credential never leaves for another host), and so does a
// repository the App is not installed on (a contributor's public fork):
// it is cloned without credentials, as before an App was configured.
func (c *Clients) GitToken(ctx context.Context, host, repoPath string) (string, error) {
	if host = strings.ToLower(host); host == "" || host != c.GitHost() {
		return "", nil
	}
	key, err := c.appKey()
	if err != nil {
		return "", err
	}
	if key == nil {
		return strings.TrimSpace(c.token), nil
	}
	owner, repo, ok := strings.Cut(strings.Trim(repoPath, "/"), "/")
	repo = strings.TrimSuffix(repo, ".git")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return "", fmt.Errorf("clone %s%s: not an OWNER/REPO path of the GitHub App's host", host, repoPath)
	}
	apiURL, err := APIURLFor(c.cfg.APIURL, host)
	if err != nil {
		return "", err
	}
	tok, _, err := c.installationToken(ctx, key, apiURL, owner, repo)
	if errors.Is(err, errNotInstalled) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("clone %s/%s: %w", owner, repo, err)
	}
	return tok, nil
}

// AppJWT is the JSON Web Token (RS256) a GitHub App authenticates with:
// issued a minute in the past against clock drift, valid nine minutes.
func AppJWT(appID int64, key *rsa.PrivateKey, now time.Time) (string, error) {
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT"})
	claims, _ := json.Marshal(map[string]int64{
		"iat": now.Add(-time.Minute).Unix(), "exp": now.Add(9 * time.Minute).Unix(), "iss": appID,
	})
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("sign the GitHub App JWT: %w", err)
	}
	return signing + "." + enc.EncodeToString(sig), nil
}
