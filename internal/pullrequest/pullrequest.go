// Package pullrequest reads GitHub pull requests as changes to review: it
// parses a pull request's address, builds the API client (a token or a
// GitHub App installation token, an Enterprise base URL, retries on
// secondary rate limits) and reads the pull request's commits, the clone
// URLs of its base and head repositories, and its changed files.
package pullrequest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/go-github/v84/github"

	"github.com/reviewfleet/reviewfleet/store"
)

// DefaultAPIURL is the API of github.com.
const DefaultAPIURL = "https://api.github.com/"

// ParseURL reads https://HOST/OWNER/REPO/pull/N (a trailing /files or
// the like is allowed) into the pull request's identity, without head.
func ParseURL(raw string) (store.PullRequest, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return store.PullRequest{}, fmt.Errorf("pull request %q: want https://HOST/OWNER/REPO/pull/N", raw)
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 4 || parts[2] != "pull" || parts[0] == "" || parts[1] == "" {
		return store.PullRequest{}, fmt.Errorf("pull request %q: want https://HOST/OWNER/REPO/pull/N", raw)
	}
	n, err := strconv.Atoi(parts[3])
	if err != nil || n <= 0 {
		return store.PullRequest{}, fmt.Errorf("pull request %q: %q is not a pull request number", raw, parts[3])
	}
	return store.PullRequest{Host: strings.ToLower(u.Host), Owner: parts[0], Repo: strings.TrimSuffix(parts[1], ".git"), Number: n}, nil
}

// APIURLFor is the REST API base for a pull request on host: the
// configured one when it is not github.com's default (the operator chose
// it: GitHub Enterprise, or a test double), github.com's API for
// github.com. A pull request on any other host with the default
// configuration is refused: deriving https://HOST/api/v3/ from a URL
// would send the token (or the App's JWT) to whoever the URL names.
func APIURLFor(configured, host string) (string, error) {
	if configured != "" && configured != DefaultAPIURL {
		return configured, nil
	}
	if host == "" || host == "github.com" || host == "www.github.com" {
		return DefaultAPIURL, nil
	}
	return "", fmt.Errorf("pull request on %s: github.api_url (GITHUB_API_URL) names github.com's API; set it to that host's API (for GitHub Enterprise https://%s/api/v3/) — credentials go only to the configured GitHub", host, host)
}

// Info is what a review needs to know about a pull request.
type Info struct {
	store.PullRequest
	BaseSHA string
	// BaseCloneURL and HeadCloneURL are the repositories of the base and
	// head branches; they differ for a pull request from a fork.
	BaseCloneURL, HeadCloneURL string
	Title, Body                string
	Draft                      bool
	State                      string
	HTMLURL                    string
}

// Purpose is the title and description, what the change is for.
func (i Info) Purpose() string {
	p := i.Title
	if b := strings.TrimSpace(i.Body); b != "" {
		p += "\n\n" + b
	}
	return p
}

// Get reads a pull request.
func Get(ctx context.Context, c *github.Client, id store.PullRequest) (Info, error) {
	pr, _, err := c.PullRequests.Get(ctx, id.Owner, id.Repo, id.Number)
	if err != nil {
		return Info{}, fmt.Errorf("read pull request %s: %w", id, err)
	}
	return FromAPI(id.Host, pr)
}

// FromAPI turns the API's pull request into Info.
func FromAPI(host string, pr *github.PullRequest) (Info, error) {
	base, head := pr.GetBase(), pr.GetHead()
	info := Info{
		PullRequest: store.PullRequest{
			Host: host, Owner: base.GetRepo().GetOwner().GetLogin(), Repo: base.GetRepo().GetName(),
			Number: pr.GetNumber(), HeadSHA: head.GetSHA(),
		},
		BaseSHA: base.GetSHA(), BaseCloneURL: base.GetRepo().GetCloneURL(), HeadCloneURL: head.GetRepo().GetCloneURL(),
		Title: pr.GetTitle(), Body: pr.GetBody(), Draft: pr.GetDraft(), State: pr.GetState(), HTMLURL: pr.GetHTMLURL(),
	}
	if info.HeadCloneURL == "" {
		// The fork was deleted: GitHub still serves the head commit from
		// the base repository (refs/pull/N/head).
		info.HeadCloneURL = info.BaseCloneURL
	}
	if info.BaseSHA == "" || info.HeadSHA == "" || info.BaseCloneURL == "" {
		return Info{}, errors.New("pull request " + info.String() + ": the API gave no base or head commit or repository")
	}
	return info, nil
}

// Files lists the pull request's changed files with their patches.
func Files(ctx context.Context, c *github.Client, id store.PullRequest) ([]*github.CommitFile, error) {
	opts := &github.ListOptions{PerPage: 100}
	var all []*github.CommitFile
	for {
		page, resp, err := c.PullRequests.ListFiles(ctx, id.Owner, id.Repo, id.Number, opts)
		if err != nil {
			return nil, fmt.Errorf("list the files of pull request %s: %w", id, err)
		}
		all = append(all, page...)
		if resp.NextPage == 0 {
			return all, nil
		}
		opts.Page = resp.NextPage
	}
}
