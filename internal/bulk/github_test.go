package bulk

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/reviewfleet/reviewfleet/store"
)

// fakeGitHub serves an organisation's repositories and their pull
// requests, one item per page so that every listing paginates, under an
// Enterprise-style /api/v3/ prefix, and checks the token.
type fakeGitHub struct {
	mu       sync.Mutex
	requests []string
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.URL.Path+"?"+r.URL.RawQuery)
	f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer s3cret" {
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return
	}
	base := "http://" + r.Host
	repos := []map[string]any{
		{"name": "api", "full_name": "acme/api", "owner": map[string]any{"login": "acme"}, "clone_url": "https://git.example/acme/api.git"},
		{"name": "web", "full_name": "acme/web", "owner": map[string]any{"login": "acme"}, "clone_url": "https://git.example/acme/web.git"},
		{"name": "old", "full_name": "acme/old", "owner": map[string]any{"login": "acme"}, "archived": true},
		{"name": "api-v2", "full_name": "acme/api-v2", "owner": map[string]any{"login": "acme"}, "clone_url": "https://git.example/acme/api-v2.git"},
	}
	pulls := map[string][]map[string]any{
		"api": {
			{"number": 7, "title": "Fix auth", "body": "Closes #3", "html_url": "https://ghe.example/acme/api/pull/7", "base": map[string]any{"sha": "b7"},
				"head": map[string]any{"sha": "h7", "repo": map[string]any{"clone_url": "https://git.example/fork/api.git"}}},
			{"number": 2, "title": "Cache", "base": map[string]any{"sha": "b2"}, "head": map[string]any{"sha": "h2"}},
		},
		"web":    {{"number": 1, "title": "Style", "base": map[string]any{"sha": "b1"}, "head": map[string]any{"sha": "h1"}}},
		"api-v2": {},
	}
	var items []map[string]any
	switch {
	case r.URL.Path == "/api/v3/orgs/acme/repos":
		items = repos
	case strings.HasPrefix(r.URL.Path, "/api/v3/repos/acme/") && strings.HasSuffix(r.URL.Path, "/pulls"):
		if r.URL.Query().Get("state") != "open" {
			http.Error(w, "want state=open", http.StatusBadRequest)
			return
		}
		name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/v3/repos/acme/"), "/pulls")
		items = pulls[name]
	default:
		http.NotFound(w, r)
		return
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if page == 0 {
		page = 1
	}
	var out []map[string]any
	if page <= len(items) {
		out = items[page-1 : page]
	}
	if page < len(items) {
		w.Header().Set("Link", fmt.Sprintf(`<%s%s?page=%d>; rel="next"`, base, r.URL.Path, page+1))
	}
	w.Header().Set("Content-Type", "application/json")
	if out == nil {
		out = []map[string]any{}
	}
	_ = json.NewEncoder(w).Encode(out)
}

func TestListOrgPullRequests(t *testing.T) {
	t.Parallel()
	fake := &fakeGitHub{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	entries, err := ListOrgPullRequests(context.Background(), "acme", GitHubOptions{
		APIURL: srv.URL + "/api/v3", Token: "s3cret", RepoFilter: "acme/*",
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, fmt.Sprintf("%d %s %s#%s %s..%s", e.Line, e.Repo, e.Labels["repo"], e.Labels["pr"], e.Base, e.Head))
	}
	want := []string{
		"1 https://git.example/acme/api.git acme/api#2 b2..h2",
		"2 https://git.example/acme/api.git acme/api#7 b7..h7",
		"3 https://git.example/acme/web.git acme/web#1 b1..h1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if entries[1].Purpose != "Fix auth\n\nCloses #3" {
		t.Errorf("purpose %q", entries[1].Purpose)
	}
	// A fork's head is fetched from the fork; the pull request is kept for posting.
	if e := entries[1]; e.HeadRepo != "https://git.example/fork/api.git" || e.PR == nil ||
		*e.PR != (store.PullRequest{Host: "ghe.example", Owner: "acme", Repo: "api", Number: 7, HeadSHA: "h7"}) {
		t.Errorf("fork entry: head repo %q, pull request %+v", e.HeadRepo, e.PR)
	}
	if entries[0].HeadRepo != "" {
		t.Errorf("a pull request from the same repository has head repo %q", entries[0].HeadRepo)
	}
	fake.mu.Lock()
	n := len(fake.requests)
	fake.mu.Unlock()
	// 4 pages of repositories, then api 2 pages, web 1, api-v2 1 (archived skipped).
	if n != 8 {
		t.Errorf("%d requests, want 8 (every page followed): %v", n, fake.requests)
	}

	filtered, err := ListOrgPullRequests(context.Background(), "acme", GitHubOptions{
		APIURL: srv.URL + "/api/v3/", Token: "s3cret", RepoFilter: "acme/api*",
	})
	if err != nil || len(filtered) != 2 || filtered[0].Labels["repo"] != "acme/api" {
		t.Fatalf("filtered: %+v %v", filtered, err)
	}

	_, err = ListOrgPullRequests(context.Background(), "acme", GitHubOptions{APIURL: srv.URL + "/api/v3/", Token: "wrong"})
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("bad token: %v", err)
	}
	if _, err := ListOrgPullRequests(context.Background(), "acme", GitHubOptions{RepoFilter: "acme/[", APIURL: srv.URL}); err == nil {
		t.Fatal("an invalid glob was accepted")
	}
}
