package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
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
	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/internal/webhook"
	"github.com/reviewfleet/reviewfleet/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

var secret = []byte("s3cret")

func sign(body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func event(action string, number int, draft bool, head string) []byte {
	b, _ := json.Marshal(map[string]any{
		"action": action,
		"pull_request": map[string]any{"number": number, "draft": draft, "html_url": "https://github.com/acme/api/pull/1",
			"head": map[string]any{"sha": head}},
		"repository": map[string]any{"name": "api", "owner": map[string]any{"login": "acme"}},
	})
	return b
}

func deliver(t *testing.T, h http.Handler, id, kind string, body []byte, sig string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/webhook", strings.NewReader(string(body)))
	req.Header.Set("X-GitHub-Event", kind)
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", sig)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestValidSignature(t *testing.T) {
	body := []byte(`{"a":1}`)
	for _, tc := range []struct {
		sig  string
		want bool
	}{
		{sign(body), true},
		{sign([]byte(`{"a":2}`)), false},
		{strings.TrimPrefix(sign(body), "sha256="), false},
		{"sha256=zz", false},
		{"", false},
	} {
		if got := webhook.ValidSignature(secret, body, tc.sig); got != tc.want {
			t.Errorf("ValidSignature(%q) = %v, want %v", tc.sig, got, tc.want)
		}
	}
	if webhook.ValidSignature(nil, body, sign(body)) {
		t.Error("an empty secret accepts a delivery")
	}
}

func TestHandler(t *testing.T) {
	t.Parallel()
	st := stagetest.Store(t)
	ctx := context.Background()
	nudged := 0
	h := &webhook.Handler{Store: st, Secret: secret, Nudge: func() { nudged++ }}

	body := event("opened", 1, false, "abc")
	if rec := deliver(t, h, "d1", "pull_request", body, sign([]byte("other"))); rec.Code != http.StatusUnauthorized {
		t.Fatalf("bad signature: %d, want 401", rec.Code)
	}
	if _, err := st.GetDelivery(ctx, "d1"); err == nil {
		t.Fatal("a delivery with a bad signature was stored")
	}
	if rec := deliver(t, h, "d1", "pull_request", body, sign(body)); rec.Code != http.StatusAccepted {
		t.Fatalf("good delivery: %d %s, want 202", rec.Code, rec.Body)
	}
	d, err := st.GetDelivery(ctx, "d1")
	if err != nil || d.Status != store.DeliveryPending || d.PR.Owner != "acme" || d.PR.Number != 1 || d.PR.HeadSHA != "abc" || d.PR.Host != "github.com" {
		t.Fatalf("stored %+v, %v", d, err)
	}
	if rec := deliver(t, h, "d1", "pull_request", body, sign(body)); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "duplicate") {
		t.Fatalf("redelivery: %d %s, want 200 duplicate", rec.Code, rec.Body)
	}
	if nudged != 1 {
		t.Fatalf("processor nudged %d times, want once", nudged)
	}
	nudged = 0

	draft := event("opened", 2, true, "def")
	if rec := deliver(t, h, "d2", "pull_request", draft, sign(draft)); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "draft") {
		t.Fatalf("draft: %d %s", rec.Code, rec.Body)
	}
	if d, _ := st.GetDelivery(ctx, "d2"); d.Status != store.DeliverySkipped {
		t.Fatalf("draft delivery is %q, want skipped", d.Status)
	}
	// A closed pull request is feedback (merged or not): stored for the
	// processor to record, not submitted.
	closed := event("closed", 3, false, "x")
	if rec := deliver(t, h, "d3", "pull_request", closed, sign(closed)); rec.Code != http.StatusAccepted {
		t.Fatalf("closed: %d", rec.Code)
	}
	if d, err := st.GetDelivery(ctx, "d3"); err != nil || d.Action != "closed" || d.PR.Number != 3 {
		t.Fatalf("closed event stored as %+v, %v", d, err)
	}
	labeled := event("labeled", 4, false, "x")
	if rec := deliver(t, h, "d5", "pull_request", labeled, sign(labeled)); rec.Code != http.StatusOK {
		t.Fatalf("labeled: %d", rec.Code)
	}
	if _, err := st.GetDelivery(ctx, "d5"); err == nil {
		t.Fatal("a labeled event was stored")
	}
	ping := []byte(`{"zen":"x"}`)
	if rec := deliver(t, h, "d4", "ping", ping, sign(ping)); rec.Code != http.StatusOK {
		t.Fatalf("ping: %d", rec.Code)
	}
}

// recorder submits reviews by storing an empty one, and remembers the
// requests.
type recorder struct {
	st   *store.Store
	mu   sync.Mutex
	reqs []submit.Request
	// fail is how many submissions fail before one succeeds.
	fail int
}

func (r *recorder) Submit(ctx context.Context, req submit.Request) (string, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	failing := r.fail > 0
	r.fail--
	r.mu.Unlock()
	if failing {
		return "", errors.New("the fleet's database is away")
	}
	return r.st.CreateReview(ctx, review.NewReview{Repo: req.Repo, Source: "url", BaseRef: req.Base, HeadRef: req.Head,
		BaseSHA: req.Base, HeadSHA: req.Head, IntentMode: "per_file", Timeout: time.Hour})
}

func TestProcessorSubmitsSkipsAndPosts(t *testing.T) {
	t.Parallel()
	st := stagetest.Store(t)
	ctx := context.Background()
	const base, head = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	code := githubfake.File{Path: "main.go", Status: "modified", Patch: "@@ -1,1 +1,1 @@\n-a\n+b"}
	docs := githubfake.File{Path: "docs/guide.md", Status: "modified", Patch: "@@ -1,1 +1,1 @@\n-a\n+b"}
	gh := githubfake.New(
		githubfake.PR{Owner: "acme", Repo: "api", Number: 1, BaseSHA: base, HeadSHA: head, Title: "Fix", Body: "why",
			BaseCloneURL: "https://example.invalid/acme/api.git", HeadCloneURL: "https://example.invalid/fork/api.git",
			Files: []githubfake.File{code, docs}},
		githubfake.PR{Owner: "acme", Repo: "api", Number: 2, BaseSHA: base, HeadSHA: head,
			BaseCloneURL: "https://example.invalid/acme/api.git", HeadCloneURL: "https://example.invalid/acme/api.git",
			Files: []githubfake.File{docs}},
	)
	defer gh.Close()
	clients, err := pullrequest.NewClients(config.GitHub{APIURL: gh.URL}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	sub := &recorder{st: st}
	p := &webhook.Processor{Store: st, Clients: clients, Submitter: sub, IgnorePaths: []string{"docs/**"},
		Poster: &publish.Poster{Store: st, Clients: clients}}
	for i, n := range []int{1, 2} {
		id := []string{"a", "b"}[i]
		if _, err := st.AddDelivery(ctx, store.Delivery{ID: id, Event: "pull_request", Action: "opened", Post: true,
			PR: store.PullRequest{Host: "github.com", Owner: "acme", Repo: "api", Number: n, HeadSHA: head}}); err != nil {
			t.Fatal(err)
		}
	}
	p.Drain(ctx)

	a, _ := st.GetDelivery(ctx, "a")
	b, _ := st.GetDelivery(ctx, "b")
	if a.Status != store.DeliverySubmitted || a.ReviewID == "" {
		t.Fatalf("delivery a: %+v, want submitted", a)
	}
	if b.Status != store.DeliverySkipped || !strings.Contains(b.Note, "ignore_paths") {
		t.Fatalf("delivery b: %+v, want skipped for ignored paths", b)
	}
	if len(sub.reqs) != 1 {
		t.Fatalf("%d submissions, want 1", len(sub.reqs))
	}
	req := sub.reqs[0]
	if req.Repo != "https://example.invalid/acme/api.git" || req.HeadRepo != "https://example.invalid/fork/api.git" ||
		req.Base != base || req.Head != head || req.Purpose != "Fix\n\nwhy" {
		t.Fatalf("submitted %+v", req)
	}
	if pr, err := st.ReviewPullRequest(ctx, a.ReviewID); err != nil || pr.Number != 1 || pr.HeadSHA != head {
		t.Fatalf("review's pull request %+v, %v", pr, err)
	}

	// Once the review has ended, the processor posts it.
	p.Drain(ctx)
	if len(gh.Reviews(1)) != 0 {
		t.Fatal("posted before the review ended")
	}
	if _, err := st.FailReview(ctx, a.ReviewID, "test"); err != nil {
		t.Fatal(err)
	}
	data, _ := render.JSON(&render.Report{ReviewID: a.ReviewID, Status: "failed", Error: "test", Findings: []render.Finding{}})
	if err := st.SaveReport(ctx, store.Report{ReviewID: a.ReviewID, Markdown: "x", JSON: data, SARIF: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	p.Drain(ctx)
	if a, _ = st.GetDelivery(ctx, "a"); a.Status != store.DeliveryPosted || len(gh.Reviews(1)) != 1 {
		t.Fatalf("delivery %+v, %d reviews; want posted once", a, len(gh.Reviews(1)))
	}
	p.Drain(ctx)
	if len(gh.Reviews(1)) != 1 {
		t.Fatal("posted twice")
	}
}

// A submission that fails is tried again after a wait that doubles, and
// the delivery fails only after MaxAttempts tries.
func TestProcessorRetriesFailedSubmissions(t *testing.T) {
	t.Parallel()
	st := stagetest.Store(t)
	ctx := context.Background()
	_, clients := onePullRequest(t)
	head := onePRHead
	for _, tc := range []struct {
		id         string
		fail       int
		wantStatus string
		wantTries  int
	}{
		{"recovers", 2, store.DeliverySubmitted, 3},
		{"gives-up", 10, store.DeliveryFailed, 3},
	} {
		sub := &recorder{st: st, fail: tc.fail}
		p := &webhook.Processor{Store: st, Clients: clients, Submitter: sub, MaxAttempts: 3, RetryAfter: 300 * time.Millisecond}
		if _, err := st.AddDelivery(ctx, store.Delivery{ID: tc.id, Event: "pull_request", Action: "opened",
			PR: store.PullRequest{Host: "github.com", Owner: "acme", Repo: "api", Number: 1, HeadSHA: head}}); err != nil {
			t.Fatal(err)
		}
		p.Drain(ctx)
		if d, _ := st.GetDelivery(ctx, tc.id); d.Status != store.DeliveryPending {
			t.Fatalf("%s: after a failed try: %+v, want pending again", tc.id, d)
		}
		p.Drain(ctx) // too early: the delivery waits
		if n := len(sub.reqs); n != 1 {
			t.Fatalf("%s: %d tries before the wait ended, want 1", tc.id, n)
		}
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if d, _ := st.GetDelivery(ctx, tc.id); d.Status != store.DeliveryPending {
				break
			}
			time.Sleep(10 * time.Millisecond)
			p.Drain(ctx)
		}
		d, _ := st.GetDelivery(ctx, tc.id)
		if d.Status != tc.wantStatus || len(sub.reqs) != tc.wantTries {
			t.Errorf("%s: %+v after %d tries, want %s after %d", tc.id, d, len(sub.reqs), tc.wantStatus, tc.wantTries)
		}
		if err := st.FinishDelivery(ctx, tc.id, store.DeliverySkipped, "", "done with it"); err != nil {
			t.Fatal(err)
		}
	}
}

// preparer submits through submit.Prepare, as the fleet does, and stores
// nothing: it shows what a delivery's clone URLs may name.
type preparer struct{ st *store.Store }

func (p preparer) Submit(ctx context.Context, req submit.Request) (string, error) {
	if _, err := submit.Prepare(ctx, config.Default(), req); err != nil {
		return "", err
	}
	return p.st.CreateReview(ctx, review.NewReview{Repo: req.Repo, Source: "url", BaseRef: req.Base, HeadRef: req.Head,
		BaseSHA: req.Base, HeadSHA: req.Head, IntentMode: "per_file", Timeout: time.Hour})
}

// A pull request whose clone URLs name a repository on the worker (the
// fleet's checkout, another review's cached clone) is refused, base and
// head alike: the forge's answer is as hostile as the payload.
func TestProcessorRefusesLocalCloneURLs(t *testing.T) {
	t.Parallel()
	st := stagetest.Store(t)
	ctx := context.Background()
	const base, head = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	cacheDir := t.TempDir()
	code := []githubfake.File{{Path: "main.go", Status: "modified", Patch: "@@ -1,1 +1,1 @@\n-a\n+b"}}
	gh := githubfake.New(
		githubfake.PR{Owner: "acme", Repo: "api", Number: 1, BaseSHA: base, HeadSHA: head,
			BaseCloneURL: cacheDir, HeadCloneURL: cacheDir, Files: code},
		githubfake.PR{Owner: "acme", Repo: "api", Number: 2, BaseSHA: base, HeadSHA: head,
			BaseCloneURL: "https://example.invalid/acme/api.git", HeadCloneURL: "file://" + cacheDir, Files: code},
	)
	defer gh.Close()
	clients, err := pullrequest.NewClients(config.GitHub{APIURL: gh.URL}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &webhook.Processor{Store: st, Clients: clients, Submitter: preparer{st: st}, MaxAttempts: 1}
	for _, n := range []int{1, 2} {
		if _, err := st.AddDelivery(ctx, store.Delivery{ID: fmt.Sprint("local-", n), Event: "pull_request", Action: "opened",
			PR: store.PullRequest{Host: "github.com", Owner: "acme", Repo: "api", Number: n, HeadSHA: head}}); err != nil {
			t.Fatal(err)
		}
	}
	p.Drain(ctx)
	for n, want := range map[int]string{
		1: "repo: a local path is not accepted from a pull request",
		2: "head_repo: a file:// URL is not accepted from a pull request",
	} {
		d, _ := st.GetDelivery(ctx, fmt.Sprint("local-", n))
		if d.Status != store.DeliveryFailed || d.ReviewID != "" || !strings.Contains(d.Note, want) {
			t.Errorf("pull request %d: delivery %+v, want failed with %q", n, d, want)
		}
	}
}

// onePRHead is the head commit of onePullRequest's pull request.
const onePRHead = "2222222222222222222222222222222222222222"

// onePullRequest serves acme/api#1, one changed line of main.go, from a fake
// GitHub and returns it with clients bound to it.
func onePullRequest(t *testing.T) (*githubfake.Server, *pullrequest.Clients) {
	t.Helper()
	gh := githubfake.New(githubfake.PR{Owner: "acme", Repo: "api", Number: 1,
		BaseSHA: "1111111111111111111111111111111111111111", HeadSHA: onePRHead,
		BaseCloneURL: "https://example.invalid/acme/api.git", HeadCloneURL: "https://example.invalid/acme/api.git",
		Files: []githubfake.File{{Path: "main.go", Status: "modified", Patch: "@@ -1,1 +1,1 @@\n-a\n+b"}}})
	t.Cleanup(gh.Close)
	clients, err := pullrequest.NewClients(config.GitHub{APIURL: gh.URL}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return gh, clients
}
