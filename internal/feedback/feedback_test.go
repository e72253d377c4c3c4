package feedback_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/feedback"
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

// content is the head version of a.go: thirty lines, all added by the
// pull requests (so every line takes an inline comment).
var content = func() string {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "stmt%d()\n", i)
	}
	return b.String()
}()

func addedPatch(text string) string {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "@@ -0,0 +1,%d @@\n", len(lines))
	for _, l := range lines {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

func sha(n int) string { return strings.Repeat(fmt.Sprint(n%10), 40) }

// world is a fake GitHub, the store, a poster that listens and a syncer.
type world struct {
	st     *store.Store
	gh     *githubfake.Server
	host   string
	poster *publish.Poster
	syncer *feedback.Syncer
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{st: stagetest.Store(t), gh: githubfake.New()}
	t.Cleanup(w.gh.Close)
	w.host = strings.TrimPrefix(w.gh.URL, "http://")
	clients, err := pullrequest.NewClients(config.GitHub{APIURL: w.gh.URL}, "tok", &http.Client{})
	if err != nil {
		t.Fatal(err)
	}
	w.syncer = &feedback.Syncer{Store: w.st, Clients: clients}
	w.poster = &publish.Poster{Store: w.st, Clients: clients, Feedback: w.syncer}
	return w
}

// push serves pull request n of acme/api at head, adding a.go.
func (w *world) push(n int, head string) {
	w.gh.AddPR(githubfake.PR{Owner: "acme", Repo: "api", Number: n, Title: "t", BaseSHA: sha(0), HeadSHA: head,
		BaseCloneURL: "https://example.invalid/acme/api.git", HeadCloneURL: "https://example.invalid/acme/api.git",
		Files: []githubfake.File{{Path: "a.go", Status: "added", Patch: addedPatch(content)}}})
}

// finding is a reported finding on lines start..end of a.go, described
// as the report stage describes it.
func finding(id int64, risk, claim string, start, end int) render.Finding {
	f := render.Finding{Finding: review.Finding{ID: id, File: "a.go", LineStart: start, LineEnd: end, RiskType: review.RiskType(risk),
		Severity: review.Medium, Description: claim, Status: review.StatusActive, Confidence: 0.9}}
	f.Fingerprint = render.Fingerprint(f.Finding)
	feedback.Describe(&f, content)
	return f
}

// reviewAndPost stores a finished review of pull request n at head
// reporting found, and posts it.
func (w *world) reviewAndPost(t *testing.T, n int, head string, found []render.Finding) publish.Result {
	t.Helper()
	ctx := context.Background()
	id, err := w.st.CreateReview(ctx, review.NewReview{Repo: "https://example.invalid/acme/api.git", Source: "url",
		BaseRef: sha(0), HeadRef: head, BaseSHA: sha(0), HeadSHA: head, IntentMode: "per_file", Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	data, err := render.JSON(&render.Report{ReviewID: id, Status: "done", HeadSHA: head, Findings: found})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.st.SaveReport(ctx, store.Report{ReviewID: id, Markdown: "x", JSON: data, SARIF: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if err := w.st.SetReviewPullRequest(ctx, id, store.PullRequest{Host: w.host, Owner: "acme", Repo: "api", Number: n, HeadSHA: head}); err != nil {
		t.Fatal(err)
	}
	res, err := w.poster.Post(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// commentOn returns the bot's inline comment on pull request n carrying
// the finding.
func (w *world) commentOn(t *testing.T, n int, f render.Finding) int64 {
	t.Helper()
	for _, c := range w.gh.Comments(n) {
		if c.InReplyTo == 0 && strings.Contains(c.Body, "reviewfleet:finding:"+f.Fingerprint) {
			return c.ID
		}
	}
	t.Fatalf("no comment on #%d carries %s", n, f.Description)
	return 0
}

// outcomes reads finding_outcomes of pull request n by fingerprint.
func (w *world) outcomes(t *testing.T, n int) map[string]string {
	t.Helper()
	out, err := w.st.OutcomesOf(context.Background(), store.PullRequestRef{
		Repository: store.Repository{Host: w.host, Owner: "acme", Repo: "api"}, Number: n})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The check a team would make: a pull request reviewed and posted; a
// person reacts 👎 to one inline comment and replies "false positive" to
// another; a push and a second pull request touching the same code post
// neither again; the outcome views count both dismissed, and a finding
// whose lines were fixed before merge counts as resolved.
func TestDismissedFindingsAreNotPostedAgainAndOutcomesCount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	a := finding(1, "robustness", "stmt2 dereferences a nil map when the cache is cold", 2, 2)
	b := finding(2, "concurrency", "stmt20 races with the flusher on the shared buffer", 20, 22)
	c := finding(3, "robustness", "stmt5 ignores the error of the write", 5, 5)

	w.push(7, sha(1))
	if res := w.reviewAndPost(t, 7, sha(1), []render.Finding{a, b, c}); res.New != 3 {
		t.Fatalf("first post: %+v, want 3 new inline comments", res)
	}
	w.gh.React(w.commentOn(t, 7, a), "alice", "-1")
	w.gh.Reply(w.commentOn(t, 7, b), "bob", "False positive: the flusher holds the same lock.")
	w.gh.React(w.commentOn(t, 7, c), "carol", "+1")
	w.gh.React(w.commentOn(t, 7, c), "reviewfleet-bot", "-1") // the bot's own reaction is no feedback

	// A push: the review raises all three again; c's lines change later.
	before := len(w.gh.Comments(7))
	w.push(7, sha(2))
	res := w.reviewAndPost(t, 7, sha(2), []render.Finding{a, b, c})
	if res.Dismissed != 2 || res.New != 0 {
		t.Fatalf("post after the push: %+v, want 2 dismissed, nothing new", res)
	}
	if got := len(w.gh.Comments(7)); got != before {
		t.Fatalf("the push added %d comments, want none", got-before)
	}
	rv := w.gh.Reviews(7)
	if body := rv[len(rv)-1].Body; !strings.Contains(body, "dismissed earlier in this repository: 2") {
		t.Fatalf("the summary does not say two findings were dismissed earlier:\n%s", body)
	}

	// A second pull request touching the same code.
	w.push(8, sha(3))
	res = w.reviewAndPost(t, 8, sha(3), []render.Finding{a, b})
	if res.Dismissed != 2 || res.New != 0 || len(w.gh.Comments(8)) != 0 {
		t.Fatalf("second pull request: %+v with %d comments, want both dismissed, none posted", res, len(w.gh.Comments(8)))
	}

	// c's line is fixed before merge; a's and b's lines stay as they were.
	w.gh.SetCompare("acme", "api", sha(1), sha(2), []githubfake.File{{Path: "a.go", Status: "modified",
		Patch: "@@ -4,3 +4,3 @@\n stmt4()\n-stmt5()\n+checked(stmt5())\n stmt6()\n"}})
	w.gh.Merge("acme", "api", 7)
	if _, err := w.syncer.SyncRepositories(ctx, "acme/api"); err != nil {
		t.Fatal(err)
	}
	got := w.outcomes(t, 7)
	for key, want := range map[string]string{
		a.Fingerprint: "dismissed",
		b.Fingerprint: "dismissed",
		c.Fingerprint: "resolved",
	} {
		if got[key] != want {
			t.Errorf("outcome of %s: %q, want %q (all: %v)", key, got[key], want, got)
		}
	}
	rows, err := w.st.Quality(ctx, "acme/api", time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	total := rows[len(rows)-1]
	if total.RiskType != "" || total.Posted != 3 || total.Dismissed != 2 || total.Resolved != 1 || total.OnMerged != 3 {
		t.Fatalf("quality total %+v, want 3 posted on #7: 2 dismissed, 1 resolved, 3 on merged", total)
	}

	// What was learned is listed with the feedback behind it; switched
	// off, the finding is posted again.
	ls, err := w.st.Learnings(ctx, "acme/api")
	if err != nil || len(ls) != 2 {
		t.Fatalf("learnings %+v, %v; want two", ls, err)
	}
	if err := w.st.SetLearningDisabled(ctx, ls[0].Repository, a.Fingerprint, true, "we were wrong"); err != nil {
		t.Fatal(err)
	}
	w.push(9, sha(4))
	res = w.reviewAndPost(t, 9, sha(4), []render.Finding{a, b})
	if res.Dismissed != 1 || res.New != 1 {
		t.Fatalf("after disabling a's learning: %+v, want a posted and b still dismissed", res)
	}
	fb, err := w.st.FeedbackOf(ctx, ls[0].PostIDs[0])
	if err != nil || len(fb) == 0 {
		t.Fatalf("feedback behind a learning: %v, %v", fb, err)
	}
}

// A dismissed finding whose code changed is posted again; findings of its
// kind elsewhere lose confidence, and say why.
func TestChangedCodeIsPostedAgainAndSimilarFindingsLoseConfidence(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := finding(1, "robustness", "the loop ignores the error of stmt", 2, 2)
	w.push(7, sha(1))
	w.reviewAndPost(t, 7, sha(1), []render.Finding{a})
	w.gh.Reply(w.commentOn(t, 7, a), "alice", "won't fix")

	moved := finding(1, "robustness", "the loop ignores the error of stmt", 3, 3) // other code, same fingerprint
	w.push(8, sha(2))
	if res := w.reviewAndPost(t, 8, sha(2), []render.Finding{moved}); res.Dismissed != 0 || res.New != 1 {
		t.Fatalf("changed code: %+v, want it posted", res)
	}

	ls, err := w.st.Learnings(context.Background(), "acme/api")
	if err != nil || len(ls) != 1 {
		t.Fatalf("learnings %v, %v", ls, err)
	}
	similar := []render.Finding{moved, finding(2, "robustness", "a.go stmt ignores the write error", 9, 9)}
	feedback.Apply(similar, ls)
	if l := similar[0].Learned; l == nil || l.Dismissed || l.Similar != 1 || similar[0].Confidence >= 0.9 || !strings.Contains(l.Note, "lowered") {
		t.Fatalf("same kind, changed code: %+v %+v, want confidence lowered and said", similar[0].Learned, similar[0].Confidence)
	}
	if similar[1].Learned != nil || similar[1].Confidence != 0.9 {
		t.Fatalf("another claim: %+v, want untouched", similar[1].Learned)
	}
}

// A stranger's thumbs-down and "false positive" are recorded but teach
// nothing: the finding is posted on the next pull request, and it is not
// counted dismissed.
func TestOutsidersDismissalsTeachNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.gh.Outsider("mallory")
	a := finding(1, "authorization", "stmt2 skips the permission check", 2, 2)
	w.push(7, sha(1))
	w.reviewAndPost(t, 7, sha(1), []render.Finding{a})
	w.gh.React(w.commentOn(t, 7, a), "mallory", "-1")
	w.gh.Reply(w.commentOn(t, 7, a), "mallory", "false positive, ignore this bot")
	w.push(8, sha(2))
	if res := w.reviewAndPost(t, 8, sha(2), []render.Finding{a}); res.Dismissed != 0 || res.New != 1 {
		t.Fatalf("after an outsider's dismissals: %+v, want the finding posted", res)
	}
	if o := w.outcomes(t, 7)[a.Fingerprint]; o != "open" {
		t.Fatalf("outcome %q, want open", o)
	}
	posts, _ := w.st.PostsOf(context.Background(), store.PullRequest{Host: w.host, Owner: "acme", Repo: "api", Number: 7})
	fb, err := w.st.FeedbackOf(context.Background(), posts[0].ID)
	if err != nil || len(fb) != 2 || fb[0].Trusted || fb[1].Trusted || fb[0].Signal != store.SignalDismiss {
		t.Fatalf("feedback %+v, %v; want two untrusted dismissals recorded", fb, err)
	}
}

// An edited reply takes its new class: "false positive" edited to "good
// catch, fixed" no longer dismisses.
func TestEditedReplyIsReadAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	a := finding(1, "robustness", "stmt7 can divide by zero", 7, 7)
	w.push(7, sha(1))
	w.reviewAndPost(t, 7, sha(1), []render.Finding{a})
	reply := w.gh.Reply(w.commentOn(t, 7, a), "dev", "false positive")
	ref := store.PullRequestRef{Repository: store.Repository{Host: w.host, Owner: "acme", Repo: "api"}, Number: 7}
	if _, err := w.syncer.SyncPR(ctx, ref, "sync"); err != nil {
		t.Fatal(err)
	}
	if o := w.outcomes(t, 7)[a.Fingerprint]; o != "dismissed" {
		t.Fatalf("outcome %q, want dismissed", o)
	}
	w.gh.EditComment(reply, "good catch, fixed in the next push")
	st, err := w.syncer.SyncPR(ctx, ref, "sync")
	if err != nil || st.Added != 1 {
		t.Fatalf("second sync: %+v, %v; want the edited reply read again", st, err)
	}
	if o := w.outcomes(t, 7)[a.Fingerprint]; o != "acknowledged" {
		t.Fatalf("outcome after the edit %q, want acknowledged", o)
	}
}

// A thread resolved by a person, merged without the finding's lines
// changing, is a dismissal; one whose lines changed is resolved.
func TestResolvedThreadWithoutChangeIsDismissed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := finding(1, "robustness", "stmt2 reads past the slice", 2, 2)
	b := finding(2, "robustness", "stmt9 leaks the file handle", 9, 9)
	w.push(7, sha(1))
	w.reviewAndPost(t, 7, sha(1), []render.Finding{a, b})
	w.gh.ResolveThread(w.commentOn(t, 7, a), "lead")
	w.gh.ResolveThread(w.commentOn(t, 7, b), "lead")
	w.push(7, sha(2))
	w.gh.SetCompare("acme", "api", sha(1), sha(2), []githubfake.File{{Path: "a.go", Status: "modified",
		Patch: "@@ -9,1 +9,1 @@\n-stmt9()\n+defer close(stmt9())\n"}})
	w.gh.Merge("acme", "api", 7)
	if _, err := w.syncer.SyncRepositories(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	got := w.outcomes(t, 7)
	if got[a.Fingerprint] != "dismissed" || got[b.Fingerprint] != "resolved" {
		t.Fatalf("outcomes %v: want the unchanged one dismissed, the changed one resolved", got)
	}
}
