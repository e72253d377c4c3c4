package pullrequest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

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

// GitScope is the URL prefix of the configured GitHub's git repositories,
// where GITHUB_TOKEN and the App's installation tokens may be sent for
// clones: https://github.com/ for api.github.com.
func (c *Clients) GitScope() string {
	if h := c.GitHost(); h != "" {
		return "https://" + h + "/"
	}
	return ""
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
	tok, _, err := c.installationToken(ctx, key, apiURL, owner, repo, true)
	if errors.Is(err, errNotInstalled) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("clone %s/%s: %w", owner, repo, err)
	}
	return tok, nil
}
