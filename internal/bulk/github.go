package bulk

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/google/go-github/v84/github"

	"github.com/reviewfleet/reviewfleet/store"
)

// GitHubOptions says where and how to list an organisation's pull requests.
type GitHubOptions struct {
	// APIURL is the REST API base (https://api.github.com/, or
	// https://HOST/api/v3/ for GitHub Enterprise).
	APIURL string
	// Token authenticates the listing (GITHUB_TOKEN); never stored.
	Token string
	// RepoFilter keeps repositories whose owner/name matches this glob
	// (doublestar syntax, e.g. "acme/api-*"); empty keeps all.
	RepoFilter string
	// PullRequests is the state of the pull requests listed: open
	// (default), closed or all.
	PullRequests string
	// HTTPClient is the client to use (default: one tracing each request
	// with otelhttp inside the caller's trace).
	HTTPClient *http.Client
}

// ListOrgPullRequests lists the open pull requests of every repository of
// an organisation (archived repositories excluded) as batch entries,
// ordered by repository and number. Each entry reviews the pull request's
// base commit against its head commit, labelled with the repository and
// pull request number, its purpose the title and description.
func ListOrgPullRequests(ctx context.Context, org string, o GitHubOptions) ([]Entry, error) {
	if o.RepoFilter != "" && !doublestar.ValidatePattern(o.RepoFilter) {
		return nil, fmt.Errorf("--repo-filter %q is not a valid glob", o.RepoFilter)
	}
	client, err := NewGitHubClient(o)
	if err != nil {
		return nil, err
	}
	repos, err := orgRepos(ctx, client, org)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, r := range repos {
		full := r.GetFullName()
		if o.RepoFilter != "" {
			if ok, _ := doublestar.Match(o.RepoFilter, full); !ok {
				continue
			}
		}
		prs, err := pulls(ctx, client, r.GetOwner().GetLogin(), r.GetName(), o.PullRequests)
		if err != nil {
			return nil, err
		}
		for _, pr := range prs {
			purpose := pr.GetTitle()
			if body := strings.TrimSpace(pr.GetBody()); body != "" {
				purpose += "\n\n" + body
			}
			e := Entry{
				Repo: r.GetCloneURL(), Base: pr.GetBase().GetSHA(), Head: pr.GetHead().GetSHA(),
				Labels:  map[string]string{"repo": full, "pr": strconv.Itoa(pr.GetNumber()), "url": pr.GetHTMLURL()},
				Purpose: purpose,
				PR: &store.PullRequest{Host: htmlHost(pr.GetHTMLURL()), Owner: r.GetOwner().GetLogin(), Repo: r.GetName(),
					Number: pr.GetNumber(), HeadSHA: pr.GetHead().GetSHA()},
			}
			if hr := pr.GetHead().GetRepo().GetCloneURL(); hr != "" && hr != e.Repo {
				e.HeadRepo = hr
			}
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Labels["repo"] != out[j].Labels["repo"] {
			return out[i].Labels["repo"] < out[j].Labels["repo"]
		}
		a, _ := strconv.Atoi(out[i].Labels["pr"])
		b, _ := strconv.Atoi(out[j].Labels["pr"])
		return a < b
	})
	for i := range out {
		out[i].Line = i + 1
	}
	return out, nil
}

func orgRepos(ctx context.Context, c *github.Client, org string) ([]*github.Repository, error) {
	opts := &github.RepositoryListByOrgOptions{ListOptions: github.ListOptions{PerPage: 100}}
	var all []*github.Repository
	for {
		page, resp, err := c.Repositories.ListByOrg(ctx, org, opts)
		if err != nil {
			return nil, fmt.Errorf("list the repositories of %s: %w", org, err)
		}
		for _, r := range page {
			if !r.GetArchived() {
				all = append(all, r)
			}
		}
		if resp.NextPage == 0 {
			return all, nil
		}
		opts.Page = resp.NextPage
	}
}

// htmlHost is the host of a pull request's web address (github.com when
// it has none).
func htmlHost(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return strings.ToLower(u.Host)
	}
	return "github.com"
}

func pulls(ctx context.Context, c *github.Client, owner, repo, state string) ([]*github.PullRequest, error) {
	if state == "" {
		state = "open"
	}
	opts := &github.PullRequestListOptions{State: state, ListOptions: github.ListOptions{PerPage: 100}}
	var all []*github.PullRequest
	for {
		page, resp, err := c.PullRequests.List(ctx, owner, repo, opts)
		if err != nil {
			return nil, fmt.Errorf("list the %s pull requests of %s/%s: %w", state, owner, repo, err)
		}
		all = append(all, page...)
		if resp.NextPage == 0 {
			return all, nil
		}
		opts.Page = resp.NextPage
	}
}
