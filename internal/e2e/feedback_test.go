package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/feedback"
	"github.com/reviewfleet/reviewfleet/internal/githubfake"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/publish"
	"github.com/reviewfleet/reviewfleet/internal/pullrequest"
	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/store"
)

const feedbackBase = "package svc\n\n// Keep is unchanged.\nfunc Keep() int { return 0 }\n"

// feedbackHead adds three functions, each with a marked defect; fixC
// rewrites the third one's line.
func feedbackHead(fixC bool) string {
	c := "\tn := 3 // BUG: C ignores the error of the write\n"
	if fixC {
		c = "\tn := checked(3)\n"
	}
	return feedbackBase + "\nfunc A() int {\n\tm := map[string]int{}\n\tm[\"a\"]++ // BUG: A writes to a map shared with the flusher\n\treturn m[\"a\"]\n}\n" +
		"\nfunc B() int {\n\tv := 2 // BUG: B drops the context deadline\n\treturn v\n}\n" +
		"\nfunc C() int {\n" + c + "\treturn n\n}\n"
}

// The whole loop through the fleet (real Postgres and Redis, a worker,
// the scripted reviewer) and a fake GitHub where other people react,
// reply and merge: a pull request is reviewed and posted; one inline
// comment gets 👎, another a "false positive" reply; a push and a second
// pull request touching the same code post neither finding again (the
// reports keep them, marked); the outcome views count both dismissed,
// and the finding whose line was fixed before the merge resolved.
func TestFeedbackLoopThroughTheFleet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t, llmfake.Markers(""), nil)
	st := f.sub.Store
	dir := t.TempDir()
	writeFile(t, dir, "svc/a.go", feedbackBase)
	base := commitAll(t, dir, "base")
	writeFile(t, dir, "svc/a.go", feedbackHead(false))
	head1 := commitAll(t, dir, "three defects")

	gh := githubfake.New()
	t.Cleanup(gh.Close)
	host := strings.TrimPrefix(gh.URL, "http://")
	serve := func(n int, head string) {
		files, err := githubfake.FilesFromGit(ctx, dir, base, head)
		if err != nil {
			t.Fatal(err)
		}
		gh.AddPR(githubfake.PR{Owner: "acme", Repo: "svc", Number: n, Title: "change", BaseSHA: base, HeadSHA: head,
			BaseCloneURL: "https://example.invalid/acme/svc.git", HeadCloneURL: "https://example.invalid/acme/svc.git", Files: files})
	}
	clients, err := pullrequest.NewClients(config.GitHub{APIURL: gh.URL}, "tok", &http.Client{})
	if err != nil {
		t.Fatal(err)
	}
	syncer := &feedback.Syncer{Store: st, Clients: clients}
	poster := &publish.Poster{Store: st, Clients: clients, Feedback: syncer}
	reviewAndPost := func(n int, head string) (review.Review, publish.Result) {
		t.Helper()
		serve(n, head)
		pr := store.PullRequest{Host: host, Owner: "acme", Repo: "svc", Number: n, HeadSHA: head}
		r := f.review(t, submit.Request{Origin: submit.FromOperator, Repo: dir, Base: base, Head: head, ChangeKey: pr.ChangeKey()})
		if r.Status != review.ReviewDone || r.Incomplete {
			t.Fatalf("review of #%d at %s: %s (%s)", n, head[:8], r.Status, r.Error)
		}
		if err := st.SetReviewPullRequest(ctx, r.ID, pr); err != nil {
			t.Fatal(err)
		}
		res, err := poster.Post(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		return r, res
	}
	comment := func(n int, claim string) int64 {
		t.Helper()
		for _, c := range gh.Comments(n) {
			if c.InReplyTo == 0 && strings.Contains(c.Body, claim) {
				return c.ID
			}
		}
		t.Fatalf("no comment on #%d says %q: %+v", n, claim, gh.Comments(n))
		return 0
	}

	_, res := reviewAndPost(1, head1)
	if res.New != 3 {
		t.Fatalf("first post: %+v, want the three findings inline", res)
	}
	gh.React(comment(1, "A writes to a map"), "alice", "-1")
	gh.Reply(comment(1, "B drops the context"), "bob", "false positive")

	// A push that fixes C.
	writeFile(t, dir, "svc/a.go", feedbackHead(true))
	head2 := commitAll(t, dir, "fix C")
	before := len(gh.Comments(1))
	r2, res := reviewAndPost(1, head2)
	if res.Dismissed != 2 || res.New != 0 || len(gh.Comments(1)) != before {
		t.Fatalf("post after the push: %+v, %d new comments; want A and B dismissed and nothing posted", res, len(gh.Comments(1))-before)
	}
	assertMarkedDismissed(t, st, r2.ID, "A writes to a map", "B drops the context")

	// A second pull request with the same code (from the first head).
	r3, res := reviewAndPost(2, head1)
	for _, c := range gh.Comments(2) {
		if strings.Contains(c.Body, "A writes to a map") || strings.Contains(c.Body, "B drops the context") {
			t.Fatalf("a dismissed finding was posted on the second pull request: %s", c.Body)
		}
	}
	if res.Dismissed != 2 || res.New != 1 {
		t.Fatalf("second pull request: %+v, want A and B dismissed, C posted", res)
	}
	assertMarkedDismissed(t, st, r3.ID, "A writes to a map", "B drops the context")

	// Merge the first pull request; the sync reads its fate.
	changed, err := githubfake.FilesFromGit(ctx, dir, head1, head2)
	if err != nil {
		t.Fatal(err)
	}
	gh.SetCompare("acme", "svc", head1, head2, changed)
	gh.Merge("acme", "svc", 1)
	if _, err := syncer.SyncRepositories(ctx, "acme/svc"); err != nil {
		t.Fatal(err)
	}
	outcomes, err := st.OutcomesOf(ctx, store.PullRequestRef{Repository: store.Repository{Host: host, Owner: "acme", Repo: "svc"}, Number: 1})
	if err != nil {
		t.Fatal(err)
	}
	posts, err := st.PostsOf(ctx, store.PullRequest{Host: host, Owner: "acme", Repo: "svc", Number: 1})
	if err != nil || len(posts) != 3 {
		t.Fatalf("posts of #1: %d, %v; want 3", len(posts), err)
	}
	for _, p := range posts {
		want := "dismissed"
		if strings.Contains(p.Claim, "C ignores the error") {
			want = "resolved"
		}
		if outcomes[p.Fingerprint] != want {
			t.Errorf("%q: outcome %q, want %q", p.Claim, outcomes[p.Fingerprint], want)
		}
	}
}

// assertMarkedDismissed checks the review's report keeps the findings
// with the claims, marked as dismissed earlier.
func assertMarkedDismissed(t *testing.T, st *store.Store, reviewID string, claims ...string) {
	t.Helper()
	stored, err := st.GetReport(context.Background(), reviewID)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := render.DecodeJSON(stored.JSON)
	if err != nil {
		t.Fatal(err)
	}
	for _, claim := range claims {
		found := false
		for _, f := range rep.Findings {
			if strings.Contains(f.Description, claim) {
				found = true
				if f.Learned == nil || !f.Learned.Dismissed {
					t.Errorf("report of %s: %q not marked dismissed (%+v)", reviewID, claim, f.Learned)
				}
			}
		}
		if !found {
			t.Errorf("report of %s lost %q", reviewID, claim)
		}
	}
	if !strings.Contains(stored.Markdown, "Learned from feedback") {
		t.Errorf("the markdown report does not say what was learned")
	}
}
