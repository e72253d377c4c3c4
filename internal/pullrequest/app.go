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
	"os"
	"strings"
	"time"

	"github.com/google/go-github/v84/github"
)

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

// Check reads the GitHub App's private key when an App is configured, so
// that a command about to use GitHub fails at its start on a missing or
// unreadable key.
func (c *Clients) Check() error {
	_, err := c.appKey()
	return err
}

// appKey is the App's private key, or nil when no App is configured. It is
// read at the first call that succeeds: a failed read is tried again next
// time (a secret mounted late).
func (c *Clients) appKey() (*rsa.PrivateKey, error) {
	if c.cfg.AppPrivateKeyFile == "" {
		return nil, nil
	}
	c.keyMu.Lock()
	defer c.keyMu.Unlock()
	if c.key != nil {
		return c.key, nil
	}
	pemBytes, err := os.ReadFile(c.cfg.AppPrivateKeyFile)
	if err != nil {
		return nil, fmt.Errorf("read the GitHub App private key (github.app_private_key_file): %w", err)
	}
	key, err := ParsePrivateKey(pemBytes)
	if err != nil {
		return nil, fmt.Errorf("github.app_private_key_file %s: %w", c.cfg.AppPrivateKeyFile, err)
	}
	c.key = key
	return key, nil
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

// installationToken is the App's token for the installation that covers
// owner/repo (or the configured one). Installations and tokens are cached
// (a token until five minutes before it expires), so a warm call asks
// GitHub nothing. A cached "not installed" answer counts only when
// trustNotInstalled; the error then wraps errNotInstalled. A cached
// installation GitHub no longer knows is looked up once more.
func (c *Clients) installationToken(ctx context.Context, key *rsa.PrivateKey, apiURL, owner, repo string, trustNotInstalled bool) (string, int64, error) {
	k := apiURL + " " + strings.ToLower(owner+"/"+repo)
	id, known := c.cachedInstallation(k, trustNotInstalled)
	if known && id == 0 {
		return "", 0, fmt.Errorf("%s/%s: %w", owner, repo, errNotInstalled)
	}
	if known {
		if tok := c.cachedToken(apiURL, id); tok != "" {
			return tok, id, nil
		}
	}
	jwt, err := AppJWT(c.cfg.AppID, key, time.Now())
	if err != nil {
		return "", 0, err
	}
	appClient, err := c.newClient(apiURL, jwt)
	if err != nil {
		return "", 0, err
	}
	for retried := false; ; retried = true {
		if !known {
			if id, err = c.lookUpInstallation(ctx, appClient, k, owner, repo); err != nil {
				return "", 0, err
			}
		}
		tok, _, err := appClient.Apps.CreateInstallationToken(ctx, id, nil)
		if err == nil {
			c.mu.Lock()
			c.tokens[fmt.Sprintf("%s#%d", apiURL, id)] = tok
			c.mu.Unlock()
			return tok.GetToken(), id, nil
		}
		if known && !retried && c.cfg.InstallationID == 0 && hasStatus(err, http.StatusNotFound, http.StatusForbidden) {
			// Uninstalled or suspended since it was cached.
			c.mu.Lock()
			delete(c.installs, k)
			c.mu.Unlock()
			known = false
			continue
		}
		return "", 0, fmt.Errorf("create a token for GitHub App installation %d: %w", id, err)
	}
}

// cachedInstallation is the configured installation, or the cached look-up
// of the repository keyed k while it is fresh.
func (c *Clients) cachedInstallation(k string, trustNotInstalled bool) (id int64, known bool) {
	if c.cfg.InstallationID != 0 {
		return c.cfg.InstallationID, true
	}
	c.mu.Lock()
	in, ok := c.installs[k]
	c.mu.Unlock()
	if !ok || time.Now().After(in.until) || (in.id == 0 && !trustNotInstalled) {
		return 0, false
	}
	return in.id, true
}

// cachedToken is installation id's token while it has five minutes left.
func (c *Clients) cachedToken(apiURL string, id int64) string {
	c.mu.Lock()
	tok := c.tokens[fmt.Sprintf("%s#%d", apiURL, id)]
	c.mu.Unlock()
	if tok == nil || time.Until(tok.GetExpiresAt().Time) < 5*time.Minute {
		return ""
	}
	return tok.GetToken()
}

// lookUpInstallation asks GitHub which installation covers owner/repo and
// caches the answer, "not installed" (404) included.
func (c *Clients) lookUpInstallation(ctx context.Context, appClient *github.Client, k, owner, repo string) (int64, error) {
	inst, _, err := appClient.Apps.FindRepositoryInstallation(ctx, owner, repo)
	var in installation
	switch {
	case hasStatus(err, http.StatusNotFound):
		in = installation{until: time.Now().Add(notInstalledFor)}
	case err != nil:
		return 0, fmt.Errorf("find the GitHub App installation of %s/%s: %w", owner, repo, err)
	default:
		in = installation{id: inst.GetID(), until: time.Now().Add(installedFor)}
	}
	c.mu.Lock()
	c.installs[k] = in
	c.mu.Unlock()
	if in.id == 0 {
		return 0, fmt.Errorf("find the GitHub App installation of %s/%s: %w", owner, repo, errNotInstalled)
	}
	return in.id, nil
}

// hasStatus reports whether err is an API answer with one of codes.
func hasStatus(err error, codes ...int) bool {
	var ge *github.ErrorResponse
	if !errors.As(err, &ge) || ge.Response == nil {
		return false
	}
	for _, code := range codes {
		if ge.Response.StatusCode == code {
			return true
		}
	}
	return false
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
