package evaluation

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/bulk"
)

const fakeDiff = `diff --git a/x.go b/x.go
--- a/x.go
+++ b/x.go
@@ -1,1 +1,2 @@
 package x
+var y = 1
`

// fakeGitHub serves pull request 7 of acme/widgets: its JSON, or its diff
// when asked for the diff media type.
func fakeGitHub(t *testing.T, auth *string) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*auth = r.Header.Get("Authorization")
		if r.URL.Path != "/api/v3/repos/acme/widgets/pulls/7" {
			http.Error(w, `{"message": "Not Found"}`, http.StatusNotFound)
			return
		}
		if strings.Contains(r.Header.Get("Accept"), "diff") {
			fmt.Fprint(w, fakeDiff)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"number": 7, "title": "Add y", "body": "Adds y.",
			"base": {"sha": "aaaa", "repo": {"clone_url": "https://github.example/acme/widgets.git"}},
			"head": {"sha": "bbbb"}}`)
	}))
}

func TestImportWritesLoadableCases(t *testing.T) {
	var auth string
	srv := fakeGitHub(t, &auth)
	defer srv.Close()
	prs, err := ParseBenchmark(strings.NewReader(`[{"pr_title": "Add y", "url": "https://github.com/acme/widgets/pull/7",
		"comments": [{"comment": "y is never used", "severity": "Low"}, {"comment": "x lacks a test", "severity": "Medium"}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	client, err := bulk.NewGitHubClient(bulk.GitHubOptions{APIURL: srv.URL + "/api/v3", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	done, err := Import(context.Background(), client, prs, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 1 || done[0].Case != "acme-widgets-7" || done[0].Golden != 2 || auth != "Bearer tok" {
		t.Fatalf("imported %+v, auth %q", done, auth)
	}
	patch, err := os.ReadFile(filepath.Join(dir, "acme-widgets-7.patch"))
	if err != nil || string(patch) != fakeDiff {
		t.Fatalf("patch %q %v", patch, err)
	}
	cases, err := LoadDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := cases[0]
	if c.Repo != "https://github.example/acme/widgets.git" || c.Diff != "acme-widgets-7.patch" || c.Purpose != "Add y\n\nAdds y." {
		t.Fatalf("case %+v", c)
	}
	if g := c.Golden[1]; g.File != "" || g.Text != "x lacks a test" || g.Severity != "Medium" {
		t.Fatalf("golden %+v", c.Golden)
	}
	// A text-only issue is never matched by lines, only by the judge.
	if m := MatchWindow([]Finding{{File: "x.go", StartLine: 2, EndLine: 2}}, c.Golden, 100); len(m.Pairs) != 0 {
		t.Fatalf("text-only golden matched by window: %+v", m.Pairs)
	}
}

func TestImportErrors(t *testing.T) {
	var auth string
	srv := fakeGitHub(t, &auth)
	defer srv.Close()
	client, _ := bulk.NewGitHubClient(bulk.GitHubOptions{APIURL: srv.URL + "/api/v3/"})
	prs := []BenchmarkPR{{Title: "t", URL: "https://github.com/acme/widgets/pull/8", Comments: []BenchmarkComment{{Comment: "c"}}}}
	if _, err := Import(context.Background(), client, prs, t.TempDir()); err == nil || !strings.Contains(err.Error(), "pull/8") {
		t.Errorf("missing pull request: %v", err)
	}
	for _, body := range []string{
		`[{"pr_title": "t", "url": "https://github.com/acme/widgets/issues/7", "comments": []}]`,
		`[{"pr_title": "t", "comments": []}]`,
		`[{"pr_title": "t", "url": "https://github.com/a/b/pull/1", "comments": [], "extra": true}]`,
		`{"pr_title": "t"}`,
	} {
		if _, err := ParseBenchmark(strings.NewReader(body)); err == nil {
			t.Errorf("%s: want an error", body)
		}
	}
}
