package pullrequest

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v84/github"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/credscope"
	"github.com/reviewfleet/reviewfleet/internal/httpwait"
)

// Clients builds API clients for repositories: with a token
// (GITHUB_TOKEN), or as a GitHub App with an installation token per
// installation, cached until shortly before it expires.
type Clients struct {
	cfg    config.GitHub
	token  string
	client *http.Client

	keyMu sync.Mutex
	key   *rsa.PrivateKey // the App's, read at first use

	mu       sync.Mutex
	tokens   map[string]*github.InstallationToken // by API URL and installation id
	installs map[string]installation              // by API URL and owner/repo
	logins   map[string]string                    // Identity by host
	// sleep replaces the wait between rate-limited attempts (tests).
	sleep func(ctx context.Context, d time.Duration) error
}

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

// WithSleep replaces how the clients wait before retrying a rate-limited
// request (tests).
func (c *Clients) WithSleep(fn func(ctx context.Context, d time.Duration) error) *Clients {
	c.sleep = fn
	return c
}

// newClient is a client of the API at apiURL authenticated by token. The
// token is attached by the transport, to requests for the API's own origin
// only: a redirect elsewhere (followed by the client) goes without it. It
// travels over https, or http to a loopback API configured so.
func (c *Clients) newClient(apiURL, token string) (*github.Client, error) {
	base := http.DefaultTransport
	if c.client != nil && c.client.Transport != nil {
		base = c.client.Transport
	}
	if !strings.HasSuffix(apiURL, "/") {
		apiURL += "/"
	}
	u, err := url.Parse(apiURL)
	if err != nil {
		return nil, fmt.Errorf("github api url %q: %w", apiURL, err)
	}
	var rt http.RoundTripper = &retryTransport{base: base, max: c.cfg.MaxRetries, maxWait: c.cfg.MaxRetryWait, sleep: c.sleep}
	if token != "" {
		if rt, err = AuthTransport(rt, apiURL, token); err != nil {
			return nil, err
		}
	}
	hc := &http.Client{Transport: rt, CheckRedirect: credscope.CheckRedirect}
	if c.client != nil {
		hc.Timeout = c.client.Timeout
	}
	gc := github.NewClient(hc)
	gc.BaseURL = u
	return gc, nil
}

// AuthTransport sends token as a bearer credential with the requests to
// the origin of apiURL and with no other. apiURL must be https, or http on
// a loopback host.
func AuthTransport(base http.RoundTripper, apiURL, token string) (http.RoundTripper, error) {
	u, err := url.Parse(apiURL)
	if err != nil {
		return nil, fmt.Errorf("github api url %q: %w", apiURL, err)
	}
	scope, err := credscope.Parse(u.Scheme + "://" + u.Host)
	if err != nil {
		return nil, fmt.Errorf("github api url %s: the token is not sent there: %w", apiURL, err)
	}
	return &credscope.Transport{Base: base, Scope: scope, Header: "Authorization", Value: "Bearer " + token}, nil
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
	// A repository found without the App earlier is looked up again: a
	// pull request event means the App is installed there now.
	tok, id, err := c.installationToken(ctx, key, apiURL, owner, repo, false)
	if err != nil {
		return nil, "", err
	}
	gc, err := c.newClient(apiURL, tok)
	return gc, fmt.Sprintf("github-writer:%s:installation:%d", host, id), err
}
