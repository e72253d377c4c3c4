package githubfake_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-github/v84/github"

	"github.com/reviewfleet/reviewfleet/internal/githubfake"
)

func TestReviewCommentsCheckedAsGitHubDoes(t *testing.T) {
	gh := githubfake.New(githubfake.PR{Owner: "o", Repo: "r", Number: 1, HeadSHA: "h", BaseSHA: "b", BaseCloneURL: "u", HeadCloneURL: "u",
		Files: []githubfake.File{{Path: "a.go", Patch: "@@ -1,2 +1,3 @@\n x\n-y\n+y2\n+y3\n@@ -10,1 +11,1 @@\n-p\n+q"}}})
	defer gh.Close()
	c := github.NewClient(nil)
	c.BaseURL, _ = c.BaseURL.Parse(gh.URL + "/")
	post := func(cm *github.DraftReviewComment) error {
		_, _, err := c.PullRequests.CreateReview(context.Background(), "o", "r", 1, &github.PullRequestReviewRequest{
			CommitID: github.Ptr("h"), Event: github.Ptr("COMMENT"), Body: github.Ptr("b"), Comments: []*github.DraftReviewComment{cm}})
		return err
	}
	bad := map[string]*github.DraftReviewComment{
		"outside the diff":  {Path: github.Ptr("a.go"), Line: github.Ptr(5), Side: github.Ptr("RIGHT"), Body: github.Ptr("x")},
		"left side":         {Path: github.Ptr("a.go"), Line: github.Ptr(2), Side: github.Ptr("LEFT"), Body: github.Ptr("x")},
		"unknown file":      {Path: github.Ptr("b.go"), Line: github.Ptr(1), Side: github.Ptr("RIGHT"), Body: github.Ptr("x")},
		"across two hunks":  {Path: github.Ptr("a.go"), StartLine: github.Ptr(2), Line: github.Ptr(11), Side: github.Ptr("RIGHT"), Body: github.Ptr("x")},
		"position (legacy)": {Path: github.Ptr("a.go"), Position: github.Ptr(1), Body: github.Ptr("x")},
	}
	for name, cm := range bad {
		var ge *github.ErrorResponse
		if err := post(cm); err == nil {
			t.Errorf("%s: accepted", name)
		} else if !errors.As(err, &ge) || ge.Response.StatusCode != 422 {
			t.Errorf("%s: %v, want 422", name, err)
		}
	}
	if err := post(&github.DraftReviewComment{Path: github.Ptr("a.go"), StartLine: github.Ptr(1), Line: github.Ptr(3), Side: github.Ptr("RIGHT"), Body: github.Ptr("ok")}); err != nil {
		t.Fatalf("a comment within a hunk: %v", err)
	}
	if len(gh.Reviews(1)) != 1 || len(gh.Comments(1)) != 1 || gh.Rejected() != len(bad) {
		t.Fatalf("%d reviews, %d comments, %d refused", len(gh.Reviews(1)), len(gh.Comments(1)), gh.Rejected())
	}
}
