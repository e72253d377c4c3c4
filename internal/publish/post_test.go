package publish_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/githubfake"
	"github.com/reviewfleet/reviewfleet/internal/publish"
	"github.com/reviewfleet/reviewfleet/internal/pullrequest"
	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

const (
	baseSHA = "1111111111111111111111111111111111111111"
	headSHA = "2222222222222222222222222222222222222222"
	head2   = "3333333333333333333333333333333333333333"
)

// The pull request changes a.go in two hunks: new lines 1-4 and 20-22.
var prFiles = []githubfake.File{{Path: "a.go", Status: "modified", Patch: "@@ -1,3 +1,4 @@\n package a\n-func f() {}\n+func f() { x() }\n+func g() {}\n var z = 1\n@@ -19,3 +20,3 @@ func h() {\n a()\n-b()\n+c()\n d()"}}

func fakePR(head string) githubfake.PR {
	return githubfake.PR{Owner: "acme", Repo: "api", Number: 7, Title: "t", BaseSHA: baseSHA, HeadSHA: head,
		BaseCloneURL: "https://example.invalid/acme/api.git", HeadCloneURL: "https://example.invalid/acme/api.git", Files: prFiles}
}

var findings = []render.Finding{
	// On a changed line, with a fix replacing exactly that line.
	{Finding: review.Finding{ID: 1, File: "a.go", LineStart: 2, LineEnd: 2, RiskType: "correctness", Severity: review.High,
		Description: "f calls x, which panics on nil", Suggestion: "guard it", Status: review.StatusActive, Confidence: 0.9,
		Fix: "@@ -2,1 +2,1 @@\n-func f() { x() }\n+func f() { if ok { x() } }\n"}},
	// Spanning two lines of the second hunk.
	{Finding: review.Finding{ID: 2, File: "a.go", LineStart: 20, LineEnd: 22, RiskType: "security", Severity: review.Medium,
		Description: "c() leaks the token", Status: review.StatusActive, Confidence: 0.9}},
	// Outside the diff: GitHub would refuse it inline.
	{Finding: review.Finding{ID: 3, File: "a.go", LineStart: 40, LineEnd: 41, RiskType: "correctness", Severity: review.Low,
		Description: "unreachable branch after the change", Status: review.StatusActive, Confidence: 0.9}},
	// In a file the pull request does not touch.
	{Finding: review.Finding{ID: 4, File: "other.go", LineStart: 3, LineEnd: 3, RiskType: "performance", Severity: review.Low,
		Description: "quadratic loop", Status: review.StatusActive, Confidence: 0.9}},
}

type fixture struct {
	st      *store.Store
	gh      *githubfake.Server
	poster  *publish.Poster
	sleeps  []time.Duration
	mu      sync.Mutex
	reviews map[string]string // head -> review id
}

func newFixture(t *testing.T, gh *githubfake.Server) *fixture {
	t.Helper()
	f := &fixture{st: stagetest.Store(t), gh: gh, reviews: map[string]string{}}
	clients, err := pullrequest.NewClients(config.GitHub{APIURL: gh.URL, MaxRetries: 3, MaxRetryWait: time.Minute}, "tok", &http.Client{})
	if err != nil {
		t.Fatal(err)
	}
	clients.WithSleep(func(_ context.Context, d time.Duration) error {
		f.mu.Lock()
		f.sleeps = append(f.sleeps, d)
		f.mu.Unlock()
		return nil
	})
	f.poster = &publish.Poster{Store: f.st, Clients: clients}
	return f
}

// reviewOf stores a finished review of the pull request at head with the
// findings as its report.
func (f *fixture) reviewOf(t *testing.T, head string) string {
	t.Helper()
	return f.reviewWith(t, head, findings, nil)
}

// reviewWith stores a finished review at head reporting found and, as
// resolved since the previous review, resolved.
func (f *fixture) reviewWith(t *testing.T, head string, found, resolved []render.Finding) string {
	t.Helper()
	ctx := context.Background()
	id, err := f.st.CreateReview(ctx, review.NewReview{Repo: "https://example.invalid/acme/api.git", Source: "url",
		BaseRef: baseSHA, HeadRef: head, BaseSHA: baseSHA, HeadSHA: head, IntentMode: "per_file", Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	rep := &render.Report{ReviewID: id, Status: "done", HeadSHA: head, Findings: found, Resolved: resolved,
		FailedItems: []render.FailedItem{{Stage: "expert", ItemKey: "finding:9", Error: "timeout"}},
		Usage:       render.Usage{LLMCalls: 12, Cost: 0.0123}}
	data, err := render.JSON(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.SaveReport(ctx, store.Report{ReviewID: id, Markdown: "x", JSON: data, SARIF: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(f.gh.URL, "http://")
	if err := f.st.SetReviewPullRequest(ctx, id, store.PullRequest{Host: host, Owner: "acme", Repo: "api", Number: 7, HeadSHA: head}); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestPostOneReviewInlineOnlyOnCommentableLines(t *testing.T) {
	t.Parallel()
	gh := githubfake.New(fakePR(headSHA))
	defer gh.Close()
	f := newFixture(t, gh)
	ctx := context.Background()
	id := f.reviewOf(t, headSHA)

	res, err := f.poster.Post(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if res.Updated || res.Inline != 2 || res.New != 2 || res.InBody != 2 {
		t.Fatalf("result %+v, want a new review with 2 inline comments and 2 findings in the body", res)
	}
	revs := gh.Reviews(7)
	if len(revs) != 1 || gh.Rejected() != 0 {
		t.Fatalf("%d reviews, %d refused; want exactly one accepted", len(revs), gh.Rejected())
	}
	body := revs[0].Body
	for _, want := range []string{publish.Marker(headSHA), "a.go:40-41", "other.go:3", "1 high", "1 medium", "2 low",
		"1 items could not be reviewed", "finding:9", "$0.0123"} {
		if !strings.Contains(body, want) {
			t.Errorf("review body lacks %q:\n%s", want, body)
		}
	}
	lines := githubfake.Commentable(prFiles)
	comments := gh.Comments(7)
	if len(comments) != 2 {
		t.Fatalf("%d comments, want 2", len(comments))
	}
	for _, c := range comments {
		if _, ok := lines[c.Path][c.Line]; !ok || c.Side != "RIGHT" {
			t.Errorf("comment on %s:%d (%s) is not on a commentable line", c.Path, c.Line, c.Side)
		}
		switch c.Line {
		case 2:
			if !strings.Contains(c.Body, "```suggestion\nfunc f() { if ok { x() } }\n```") {
				t.Errorf("the fix is not a suggestion block:\n%s", c.Body)
			}
		case 22:
			if c.StartLine != 20 {
				t.Errorf("multi-line comment starts at %d, want 20", c.StartLine)
			}
		default:
			t.Errorf("unexpected comment on line %d", c.Line)
		}
	}

	// Posting again updates the same review; nothing is commented twice.
	res2, err := f.poster.Post(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !res2.Updated || res2.GitHubReviewID != res.GitHubReviewID || res2.Inline != 2 || res2.New != 0 || res2.AlreadyPosted != 0 {
		t.Fatalf("second post %+v, want an update of review %d", res2, res.GitHubReviewID)
	}
	if n, c := len(gh.Reviews(7)), len(gh.Comments(7)); n != 1 || c != 2 {
		t.Fatalf("after posting again: %d reviews and %d comments, want 1 and 2", n, c)
	}
	if body := gh.Reviews(7)[0].Body; !strings.Contains(body, "Inline comments: 2; in this summary: 2.") {
		t.Errorf("updated body miscounts the comments:\n%s", body)
	}
}

func TestPostFindsEarlierReviewByMarker(t *testing.T) {
	t.Parallel()
	gh := githubfake.New(fakePR(headSHA))
	defer gh.Close()
	ctx := context.Background()
	first := newFixture(t, gh)
	if _, err := first.poster.Post(ctx, first.reviewOf(t, headSHA)); err != nil {
		t.Fatal(err)
	}
	// Another database that never heard of the post: the marker finds it.
	second := newFixture(t, gh)
	res, err := second.poster.Post(ctx, second.reviewOf(t, headSHA))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Updated || len(gh.Reviews(7)) != 1 {
		t.Fatalf("result %+v with %d reviews, want the earlier review updated", res, len(gh.Reviews(7)))
	}
}

// Markers in someone else's review or comments are not the bot's: a
// review carrying the head's marker is not taken over, and a comment
// carrying a finding's fingerprint does not silence the finding.
func TestPostTrustsOnlyItsOwnMarkers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The bot's comments as they would read, from a post on another fake.
	gh0 := githubfake.New(fakePR(headSHA))
	defer gh0.Close()
	f0 := newFixture(t, gh0)
	if _, err := f0.poster.Post(ctx, f0.reviewOf(t, headSHA)); err != nil {
		t.Fatal(err)
	}
	gh := githubfake.New(fakePR(headSHA))
	defer gh.Close()
	for _, c := range gh0.Comments(7) {
		gh.AddForeignReview(7, "mallory", publish.Marker(headSHA), c.Body)
	}
	f := newFixture(t, gh)
	res, err := f.poster.Post(ctx, f.reviewOf(t, headSHA))
	if err != nil {
		t.Fatal(err)
	}
	if res.Updated || res.New != 2 || res.AlreadyPosted != 0 {
		t.Fatalf("result %+v, want a review of its own with both comments", res)
	}
	own := 0
	for _, rv := range gh.Reviews(7) {
		if rv.User == githubfake.TokenLogin {
			own++
		}
	}
	if own != 1 || len(gh.Reviews(7)) != 3 {
		t.Fatalf("%d reviews, %d by the bot; want mallory's 2 untouched and 1 by the bot", len(gh.Reviews(7)), own)
	}
}

func TestPostNewPushSkipsFindingsAlreadyCommented(t *testing.T) {
	t.Parallel()
	gh := githubfake.New(fakePR(headSHA))
	defer gh.Close()
	f := newFixture(t, gh)
	ctx := context.Background()
	if _, err := f.poster.Post(ctx, f.reviewOf(t, headSHA)); err != nil {
		t.Fatal(err)
	}
	gh.AddPR(fakePR(head2))
	res, err := f.poster.Post(ctx, f.reviewOf(t, head2))
	if err != nil {
		t.Fatal(err)
	}
	if res.Updated || res.Inline != 0 || res.New != 0 || res.AlreadyPosted != 2 {
		t.Fatalf("result %+v, want a new review for the new head with no comment repeated", res)
	}
	if n, c := len(gh.Reviews(7)), len(gh.Comments(7)); n != 2 || c != 2 {
		t.Fatalf("%d reviews and %d comments, want 2 (one per head) and 2", n, c)
	}
}

// A finding fixed by the next push is listed as resolved in that push's
// review, linked to the thread of its earlier inline comment.
func TestPostLinksResolvedFindingsToTheirThreads(t *testing.T) {
	t.Parallel()
	gh := githubfake.New(fakePR(headSHA))
	defer gh.Close()
	f := newFixture(t, gh)
	ctx := context.Background()
	if _, err := f.poster.Post(ctx, f.reviewOf(t, headSHA)); err != nil {
		t.Fatal(err)
	}
	var thread string
	for _, c := range gh.Comments(7) {
		if c.Line == 2 {
			thread = fmt.Sprintf("/acme/api/pull/7#discussion_r%d", c.ID)
		}
	}
	if thread == "" {
		t.Fatalf("no inline comment on a.go:2: %+v", gh.Comments(7))
	}
	gh.AddPR(fakePR(head2))
	if _, err := f.poster.Post(ctx, f.reviewWith(t, head2, findings[1:], findings[:1])); err != nil {
		t.Fatal(err)
	}
	reviews := gh.Reviews(7)
	if len(reviews) != 2 {
		t.Fatalf("%d reviews, want one per head", len(reviews))
	}
	body := reviews[1].Body
	want := "- ~~`a.go:2`~~ · correctness: f calls x, which panics on nil ([comment](" + gh.URL + thread + "))"
	if !strings.Contains(body, "Resolved since the previous review: 1") || !strings.Contains(body, want) {
		t.Errorf("the second push's review lacks %q:\n%s", want, body)
	}
}

func TestPostWaitsOutSecondaryRateLimit(t *testing.T) {
	t.Parallel()
	gh := githubfake.New(fakePR(headSHA))
	defer gh.Close()
	f := newFixture(t, gh)
	gh.RateLimitOnce()
	if _, err := f.poster.Post(context.Background(), f.reviewOf(t, headSHA)); err != nil {
		t.Fatal(err)
	}
	if gh.Limited() != 1 || len(gh.Reviews(7)) != 1 {
		t.Fatalf("limited %d times, %d reviews; want 1 and 1", gh.Limited(), len(gh.Reviews(7)))
	}
	if len(f.sleeps) != 1 || f.sleeps[0] != time.Second {
		t.Fatalf("waited %v, want once for Retry-After's 1s", f.sleeps)
	}
}

func TestPostMovedHeadPutsFindingsInBody(t *testing.T) {
	t.Parallel()
	gh := githubfake.New(fakePR(head2)) // the pull request moved on
	defer gh.Close()
	f := newFixture(t, gh)
	res, err := f.poster.Post(context.Background(), f.reviewOf(t, headSHA))
	if err != nil {
		t.Fatal(err)
	}
	if res.Inline != 0 || res.InBody != 4 || len(gh.Comments(7)) != 0 {
		t.Fatalf("result %+v, want every finding in the body", res)
	}
}

func TestPostAgainAfterReviewDeletedOnGitHub(t *testing.T) {
	t.Parallel()
	gh := githubfake.New(fakePR(headSHA))
	defer gh.Close()
	f := newFixture(t, gh)
	ctx := context.Background()
	id := f.reviewOf(t, headSHA)
	first, err := f.poster.Post(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	gh.DeleteReview(first.GitHubReviewID)
	res, err := f.poster.Post(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if res.Updated || res.GitHubReviewID == first.GitHubReviewID || res.New != 2 || len(gh.Reviews(7)) != 1 || len(gh.Comments(7)) != 2 {
		t.Fatalf("result %+v, %d reviews, %d comments; want a new review with its comments again", res, len(gh.Reviews(7)), len(gh.Comments(7)))
	}
}

func TestConcurrentPostsMakeOneReview(t *testing.T) {
	t.Parallel()
	gh := githubfake.New(fakePR(headSHA))
	defer gh.Close()
	gh.SetLatency(20 * time.Millisecond)
	f := newFixture(t, gh)
	id := f.reviewOf(t, headSHA)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = f.poster.Post(context.Background(), id)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// One writer per installation: the posts ran one after the other.
	if n, c := len(gh.Reviews(7)), len(gh.Comments(7)); n != 1 || c != 2 {
		t.Fatalf("%d reviews and %d comments after concurrent posts, want 1 and 2", n, c)
	}
}
