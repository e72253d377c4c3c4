package gitsrc

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestParseRemote(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw, url, user, token string
		bad                   bool
	}{
		{raw: "https://github.com/o/r.git", url: "https://github.com/o/r.git"},
		{raw: "https://bob:s3cret@github.com/o/r.git", url: "https://github.com/o/r.git", user: "bob", token: "s3cret"},
		{raw: "https://ghp_tok@github.com/o/r", url: "https://github.com/o/r", token: "ghp_tok"},
		{raw: "http://u:p@localhost:8080/r", url: "http://localhost:8080/r", user: "u", token: "p"},
		{raw: "ssh://git@host/o/r.git", url: "ssh://git@host/o/r.git"},
		{raw: "ssh://git:hunter2pass@host/o/r.git", url: "ssh://git@host/o/r.git"},
		{raw: "https://host/o/r.git?access_token=tok123", url: "https://host/o/r.git"},
		{raw: "git@github.com:o/r.git", url: "git@github.com:o/r.git"},
		{raw: "file:///srv/r.git", url: "file:///srv/r.git"},
		{raw: "ext::sh -c evil", bad: true},
		{raw: "-uupload-pack=x", bad: true},
		{raw: "ftp://host/r", bad: true},
		{raw: "", bad: true},
	}
	for _, tc := range tests {
		r, err := ParseRemote(tc.raw)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseRemote(%q) accepted", tc.raw)
			}
			continue
		}
		if err != nil || r.URL != tc.url || r.User != tc.user || r.Token != tc.token {
			t.Errorf("ParseRemote(%q) = %+v, %v; want url %q user %q token %q", tc.raw, r, err, tc.url, tc.user, tc.token)
		}
	}
	if _, err := ParseRemote("https://u:s3cret@host/%zz"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error for a bad URL = %v; want one without the password", err)
	}
}

// TestFetchRevAndRefs clones a file:// remote, then brings in a commit made
// afterwards by its id, and a branch moved afterwards by fetching refs.
func TestFetchRevAndRefs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := newRepo(t)
	r := Remote{URL: "file://" + src.dir}
	dest := filepath.Join(t.TempDir(), "mirror")
	if err := Mirror(ctx, r, dest); err != nil {
		t.Fatal(err)
	}
	if !IsRepo(ctx, dest) || !HasCommit(ctx, dest, src.head) {
		t.Fatal("the mirror lacks the head commit")
	}
	writeFile(t, src.dir, "later.txt", "later\n", 0o644)
	git(t, src.dir, "add", "-A")
	git(t, src.dir, "commit", "-q", "-m", "later")
	later := git(t, src.dir, "rev-parse", "HEAD")
	if HasCommit(ctx, dest, later) {
		t.Fatal("the mirror has a commit made after it")
	}
	got, err := FetchRev(ctx, dest, r, later)
	if err != nil || got != later {
		t.Fatalf("FetchRev = %q, %v; want %q", got, err, later)
	}
	if data, err := ReadFile(ctx, dest, later, "later.txt"); err != nil || string(data) != "later\n" {
		t.Fatalf("read the fetched commit: %q, %v", data, err)
	}
	if err := FetchRefs(ctx, dest, r); err != nil {
		t.Fatal(err)
	}
	if got, err := ResolveRev(ctx, dest, "main"); err != nil || got != later {
		t.Fatalf("main after FetchRefs = %q, %v; want %q", got, err, later)
	}
	if _, err := FetchRev(ctx, dest, r, "main:refs/heads/x"); err == nil {
		t.Error("FetchRev accepted a refspec")
	}
}

// TestFetchOverHTTPWithToken serves a repository with git http-backend
// behind a check of the Authorization header, and checks that the token
// is sent but stored nowhere in the clone.
func TestFetchOverHTTPWithToken(t *testing.T) {
	t.Parallel()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	src := newRepo(t)
	root := t.TempDir()
	git(t, root, "clone", "-q", "--bare", src.dir, filepath.Join(root, "repo.git"))
	const token = "s3cret-token-1234"
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	var authorized atomic.Int32
	backend := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Authorization") != want {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		authorized.Add(1)
		backend.ServeHTTP(w, req)
	}))
	defer srv.Close()

	raw := strings.Replace(srv.URL, "http://", "http://"+token+"@", 1) + "/repo.git"
	r, err := ParseRemote(raw)
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "mirror")
	if err := Mirror(ctx, Remote{URL: r.URL}, dest); err == nil {
		t.Fatal("clone without the token succeeded")
	}
	if err := Mirror(ctx, r, dest); err != nil {
		t.Fatalf("clone with the token: %v", err)
	}
	if got, err := FetchRev(ctx, dest, r, src.base); err != nil || got != src.base {
		t.Fatalf("FetchRev over http = %q, %v", got, err)
	}
	if authorized.Load() == 0 {
		t.Fatal("the server saw no authorized request")
	}
	out, err := exec.Command("grep", "-r", "-l", token, dest).CombinedOutput()
	if err == nil {
		t.Fatalf("the token is written in the clone: %s", out)
	}
	if origin := git(t, dest, "config", "remote.origin.url"); origin != r.URL {
		t.Errorf("origin = %q, want %q", origin, r.URL)
	}
}
