package submit

import (
	"context"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/gitsrc"
)

// countingRepos records every repository it is asked to parse or open: a
// refused request must not reach the clone cache at all.
type countingRepos struct{ remotes, opened []string }

func (c *countingRepos) Remote(_ context.Context, raw string) (gitsrc.Remote, error) {
	c.remotes = append(c.remotes, raw)
	return gitsrc.ParseRemote(raw)
}

func (c *countingRepos) WithRepo(_ context.Context, r gitsrc.Remote, _ func(string) error) error {
	c.opened = append(c.opened, r.URL)
	return context.Canceled
}

// Only the operator may point a review at a repository on this host: a
// request from anyone else naming a directory or file:// URL (the fleet's
// own checkout, another review's cached clone) is refused before anything
// is read, and a head repository is always remote.
func TestPrepareRefusesLocalRepositoriesFromOthers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := gitRepo(t, map[string]string{"a.go": "package a\n"}, map[string]string{"a.go": "package a\n\nfunc A() {}\n"})
	sha := strings.Repeat("ab", 20)
	for _, tc := range []struct {
		name string
		req  Request
		want string
	}{
		{"manifest directory", Request{Origin: FromManifest, Repo: repo, Base: "HEAD~1", Head: "HEAD"},
			"repo: a local path is not accepted from a manifest; use a remote URL"},
		{"pull request file URL", Request{Origin: FromPullRequest, Repo: "file://" + repo, Base: "HEAD~1", Head: "HEAD"},
			"repo: a file:// URL is not accepted from a pull request"},
		{"upper-case scheme", Request{Repo: "FILE://" + repo, Base: "HEAD~1", Head: "HEAD"},
			"repo: a file:// URL is not accepted from a remote request"},
		{"diff file", Request{Origin: FromManifest, DiffFile: "/etc/passwd", Repo: "https://git.example/a.git"},
			"diff: a diff file on this host is not accepted from a manifest"},
		{"fork on this host", Request{Origin: FromPullRequest, Repo: "https://git.example/a.git", HeadRepo: "file://" + repo, Base: sha, Head: sha},
			"head_repo: a file:// URL is not accepted"},
		{"fork on this host from the command line", Request{Origin: FromOperator, Repo: repo, HeadRepo: repo, Base: "HEAD~1", Head: "HEAD"},
			"head_repo: a local path is not accepted from the command line"},
		{"plain http elsewhere", Request{Origin: FromPullRequest, Repo: "http://git.example/a.git", Base: sha, Head: sha},
			"repo: plain http is not accepted from a pull request; use https"},
		{"loopback http not configured", Request{Origin: FromManifest, Repo: "http://127.0.0.1:1/a.git", Base: sha, Head: sha},
			"snapshot.allow_loopback_http"},
	} {
		repos := &countingRepos{}
		tc.req.Repos = repos
		_, err := Prepare(ctx, config.Default(), tc.req)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to say %q", tc.name, err, tc.want)
		}
		if len(repos.remotes)+len(repos.opened) != 0 {
			t.Errorf("%s: refused only after reaching the clone cache: %v %v", tc.name, repos.remotes, repos.opened)
		}
	}

	// The operator's --repo DIR and file:// URL still work.
	for _, r := range []string{repo, "file://" + repo} {
		nr, err := Prepare(ctx, config.Default(), Request{Origin: FromOperator, Repo: r, Base: "HEAD~1", Head: "HEAD", CacheDir: t.TempDir()})
		if err != nil || len(nr.Files) != 1 {
			t.Errorf("operator's %s: %d files, %v", r, len(nr.Files), err)
		}
	}

	// Remote URLs reach the cache; loopback http only when configured.
	cfg := config.Default()
	cfg.Snapshot.AllowLoopbackHTTP = true
	for _, r := range []string{"https://git.example/a.git", "git@git.example:acme/a.git", "ssh://git@git.example/a.git", "http://127.0.0.1:1/a.git", "http://[::1]:1/a.git"} {
		repos := &countingRepos{}
		_, err := Prepare(ctx, cfg, Request{Origin: FromManifest, Repo: r, Base: sha, Head: sha, Repos: repos})
		if len(repos.opened) != 1 {
			t.Errorf("%s: not opened (%v)", r, err)
		}
	}
}
