package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v84/github"

	"github.com/reviewfleet/reviewfleet/internal/feedback"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/internal/webhook"
	"github.com/reviewfleet/reviewfleet/store"
)

func commentEvent(kind string, number int, onPR bool, updated time.Time) []byte {
	repo := map[string]any{"name": "api", "owner": map[string]any{"login": "acme"}}
	comment := map[string]any{"id": 5, "body": "false positive", "updated_at": updated.UTC().Format(time.RFC3339)}
	var body map[string]any
	if kind == "issue_comment" {
		issue := map[string]any{"number": number, "html_url": "https://github.com/acme/api/pull/1"}
		if onPR {
			issue["pull_request"] = map[string]any{"url": "https://api.github.com/repos/acme/api/pulls/1"}
		}
		body = map[string]any{"action": "created", "issue": issue, "comment": comment, "repository": repo}
	} else {
		body = map[string]any{"action": "created", "comment": comment, "repository": repo,
			"pull_request": map[string]any{"number": number, "html_url": "https://github.com/acme/api/pull/1"}}
	}
	b, _ := json.Marshal(body)
	return b
}

// Review comments, issue comments on pull requests and closed pull
// requests are stored as feedback deliveries; the processor records them
// by reading the pull request's feedback. An issue comment on a plain
// issue, and an old one, are not stored.
func TestFeedbackDeliveriesAreRecorded(t *testing.T) {
	t.Parallel()
	st := stagetest.Store(t)
	ctx := context.Background()
	gh, clients := onePullRequest(t)
	h := &webhook.Handler{Store: st, Secret: secret}
	now := time.Now()
	for _, tc := range []struct {
		id, kind string
		body     []byte
		code     int
	}{
		{"rc", "pull_request_review_comment", commentEvent("pull_request_review_comment", 1, true, now), http.StatusAccepted},
		{"ic", "issue_comment", commentEvent("issue_comment", 1, true, now), http.StatusAccepted},
		{"issue", "issue_comment", commentEvent("issue_comment", 9, false, now), http.StatusOK},
		{"old", "pull_request_review_comment", commentEvent("pull_request_review_comment", 1, true, now.Add(-100*time.Hour)), http.StatusOK},
	} {
		if rec := deliver(t, h, tc.id, tc.kind, tc.body, sign(tc.body)); rec.Code != tc.code {
			t.Errorf("%s: %d %s, want %d", tc.id, rec.Code, rec.Body, tc.code)
		}
	}
	for _, id := range []string{"issue", "old"} {
		if _, err := st.GetDelivery(ctx, id); err == nil {
			t.Errorf("delivery %s was stored", id)
		}
	}

	// The bot's comment on #1, linked to its finding, and a reply.
	gc, _, err := clients.For(ctx, "github.com", "acme", "api")
	if err != nil {
		t.Fatal(err)
	}
	rv, _, err := gc.PullRequests.CreateReview(ctx, "acme", "api", 1, &github.PullRequestReviewRequest{CommitID: github.Ptr(onePRHead),
		Event: github.Ptr("COMMENT"), Body: github.Ptr("r"), Comments: []*github.DraftReviewComment{{Path: github.Ptr("main.go"),
			Line: github.Ptr(1), Side: github.Ptr("RIGHT"), Body: github.Ptr("b <!-- reviewfleet:finding:fp1 -->")}}})
	if err != nil {
		t.Fatal(err)
	}
	c := gh.Comments(1)[0]
	if err := st.RecordFindingPosts(ctx, []store.FindingPost{{PR: store.PullRequest{Host: "github.com", Owner: "acme", Repo: "api", Number: 1, HeadSHA: onePRHead},
		Fingerprint: "fp1", GitHubReviewID: rv.GetID(), CommentID: c.ID}}); err != nil {
		t.Fatal(err)
	}
	gh.Reply(c.ID, "dev", "False positive: checked above.")

	p := &webhook.Processor{Store: st, Clients: clients, Submitter: &recorder{st: st}, Feedback: &feedback.Syncer{Store: st, Clients: clients}}
	calls := gh.ReactionCalls()
	p.Drain(ctx)
	for _, id := range []string{"rc", "ic"} {
		d, err := st.GetDelivery(ctx, id)
		if err != nil || d.Status != store.DeliveryRecorded || d.ReviewID != "" {
			t.Errorf("delivery %s: %+v, %v; want recorded without a review", id, d, err)
		}
	}
	if n := gh.ReactionCalls() - calls; n != 1 {
		t.Errorf("two deliveries of one pull request read its reactions %d times, want once", n)
	}
	if d, _ := st.GetDelivery(ctx, "ic"); !strings.Contains(d.Note, "read with delivery rc") {
		t.Errorf("the second delivery: %q, want it covered by the first's read", d.Note)
	}
	posts, _ := st.PostsOf(ctx, store.PullRequest{Host: "github.com", Owner: "acme", Repo: "api", Number: 1})
	fb, err := st.FeedbackOf(ctx, posts[0].ID)
	if err != nil || len(fb) != 1 || fb[0].Source != "webhook" || fb[0].Content != feedback.ClassFalsePositive || !strings.Contains(fb[0].Body, "checked above") {
		t.Fatalf("recorded %+v, %v; want the reply once, classed false positive", fb, err)
	}
}
