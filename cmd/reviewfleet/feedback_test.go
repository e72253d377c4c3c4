package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/reviewfleet/reviewfleet/internal/githubfake"
	"github.com/reviewfleet/reviewfleet/internal/repoconfig"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

// feedback sync, quality and learnings as a person runs them: the sync
// reads a thumbs-down and a merge from GitHub, quality counts them, and
// the learning is listed, shown with its feedback, exported as a
// .reviewfleet.yaml that parses, and disabled.
func TestFeedbackQualityAndLearningsCommands(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	dsn := testenv.IsolatedSchema(t)
	gh := githubfake.New(githubfake.PR{Owner: "acme", Repo: "api", Number: 3, BaseSHA: strings.Repeat("1", 40), HeadSHA: strings.Repeat("2", 40),
		BaseCloneURL: "https://example.invalid/acme/api.git", HeadCloneURL: "https://example.invalid/acme/api.git",
		Files: []githubfake.File{{Path: "a.go", Status: "added", Patch: "@@ -0,0 +1,2 @@\n+x()\n+y()\n"}}})
	defer gh.Close()
	host := strings.TrimPrefix(gh.URL, "http://")
	for k, v := range map[string]string{"DATABASE_URL": dsn, "GITHUB_API_URL": gh.URL + "/", "GITHUB_TOKEN": "tok"} {
		t.Setenv(k, v)
	}
	if _, _, err := runCmd(t, "migrate"); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"feedback", "-h"}, {"learnings", "--help"}, {"quality", "-h"}} {
		if _, _, err := runCmd(t, args...); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	if _, _, err := runCmd(t, "learnings", "disable", "abc"); err == nil || !strings.Contains(err.Error(), "--repo") {
		t.Errorf("disable without --repo: %v", err)
	}
	if _, _, err := runCmd(t, "quality", "--since", "soon"); err == nil || !strings.Contains(err.Error(), "--since") {
		t.Errorf("bad --since: %v", err)
	}

	// A finding posted as the bot would post it, and a person's 👎.
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	req, _ := http.NewRequest(http.MethodPost, gh.URL+"/repos/acme/api/pulls/3/reviews", strings.NewReader(
		`{"commit_id":"`+strings.Repeat("2", 40)+`","body":"r","event":"COMMENT","comments":[{"path":"a.go","line":1,"side":"RIGHT","body":"x panics <!-- reviewfleet:finding:fp0123456789abcdef -->"}]}`))
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("post on the fake: %v %v", resp, err)
	}
	resp.Body.Close()
	comment := gh.Comments(3)[0]
	if err := st.RecordFindingPosts(ctx, []store.FindingPost{{PR: store.PullRequest{Host: host, Owner: "acme", Repo: "api", Number: 3, HeadSHA: strings.Repeat("2", 40)},
		Fingerprint: "fp0123456789abcdef", RiskType: "robustness", Severity: "high", File: "a.go", LineStart: 1, LineEnd: 1,
		Claim: "x panics on nil", CommentID: comment.ID, GitHubReviewID: comment.ReviewID}}); err != nil {
		t.Fatal(err)
	}
	gh.React(comment.ID, "alice", "-1")
	gh.Merge("acme", "api", 3)

	out, _, err := runCmd(t, "feedback", "sync", "--repo", "acme/api")
	if err != nil || !strings.Contains(out, "synced 1 pull requests: 2 new feedback rows, 1 found merged") {
		t.Fatalf("feedback sync: %v %q", err, out)
	}
	out, _, err = runCmd(t, "quality", "--repo", "acme/api", "--format", "json")
	var rows []map[string]any
	if err != nil || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 2 || rows[1]["dismissed"] != float64(1) || rows[1]["dismissal_rate"] != float64(1) {
		t.Fatalf("quality json: %v %s", err, out)
	}
	if out, _, err = runCmd(t, "quality"); err != nil || !strings.Contains(out, "100.0%") {
		t.Fatalf("quality table: %v %s", err, out)
	}
	if out, _, err = runCmd(t, "learnings", "list"); err != nil || !strings.Contains(out, "fp0123456789") || !strings.Contains(out, "active") {
		t.Fatalf("learnings list: %v %s", err, out)
	}
	if out, _, err = runCmd(t, "learnings", "show", "fp0123"); err != nil || !strings.Contains(out, "reaction -1 by alice") {
		t.Fatalf("learnings show: %v %s", err, out)
	}
	out, _, err = runCmd(t, "learnings", "export", "--repo", "acme/api")
	var exported repoconfig.File
	if err != nil || yaml.Unmarshal([]byte(out), &exported) != nil || !strings.Contains(exported.Instructions, "x panics on nil") {
		t.Fatalf("learnings export: %v\n%s", err, out)
	}
	if out, _, err = runCmd(t, "learnings", "disable", "fp0123", "--repo", "acme/api", "--note", "fixed the bot"); err != nil || !strings.Contains(out, "disabled") {
		t.Fatalf("learnings disable: %v %s", err, out)
	}
	ls, err := st.Learnings(ctx, "acme/api")
	if err != nil || len(ls) != 1 || !ls[0].Disabled || ls[0].Note != "fixed the bot" {
		t.Fatalf("after disable: %+v, %v", ls, err)
	}
	if _, _, err := runCmd(t, "learnings", "export", "--repo", "acme/api"); err == nil {
		t.Fatal("exported a disabled learning")
	}
}
