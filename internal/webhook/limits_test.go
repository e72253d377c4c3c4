package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/internal/webhook"
	"github.com/reviewfleet/reviewfleet/store"
)

// lazyBody stands in for a large request body without holding it: it
// yields size bytes of 'x' and counts what the handler read. With gate
// set, the first Read blocks until gate is closed (after closing started).
type lazyBody struct {
	size    int64
	read    atomic.Int64
	gate    chan struct{}
	started chan struct{}
	once    sync.Once
}

func (b *lazyBody) Read(p []byte) (int, error) {
	if b.gate != nil {
		b.once.Do(func() { close(b.started) })
		<-b.gate
	}
	left := b.size - b.read.Load()
	if left <= 0 {
		return 0, io.EOF
	}
	n := min(int64(len(p)), left)
	for i := range p[:n] {
		p[i] = 'x'
	}
	b.read.Add(n)
	return int(n), nil
}

// post sends body through h with the given signature header (none when
// sig is ""); length is the announced Content-Length (-1: unknown, as
// with chunked encoding).
func post(h http.Handler, id, kind string, body io.Reader, length int64, sig string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/webhook", body)
	req.ContentLength = length
	req.Header.Set("X-GitHub-Event", kind)
	req.Header.Set("X-GitHub-Delivery", id)
	if sig != "" {
		req.Header.Set("X-Hub-Signature-256", sig)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// A flood of large bodies without a usable signature is refused before
// any of them is read: memory stays where it was however many arrive.
func TestUnsignedBodiesAreNotRead(t *testing.T) {
	t.Parallel()
	h := &webhook.Handler{Secret: secret}
	const n, size = 40, 25 << 20
	sigs := []string{"", "sha256=zz", "sha1=" + strings.Repeat("ab", 20), strings.TrimPrefix(sign([]byte("x")), "sha256="),
		"sha256=" + strings.Repeat("ab", 31), sign([]byte("x")) + "00"}
	bodies := make([]*lazyBody, n)
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		bodies[i] = &lazyBody{size: size}
		wg.Go(func() {
			codes[i] = post(h, fmt.Sprint("flood-", i), "pull_request", bodies[i], size, sigs[i%len(sigs)]).Code
		})
	}
	wg.Wait()
	for i := range n {
		if codes[i] != http.StatusUnauthorized {
			t.Errorf("request %d (signature %q): %d, want 401", i, sigs[i%len(sigs)], codes[i])
		}
		if r := bodies[i].read.Load(); r != 0 {
			t.Errorf("request %d (signature %q): %d body bytes read, want none", i, sigs[i%len(sigs)], r)
		}
	}
}

// Bodies whose signature is well-formed but not yet checked are read a
// few at a time; the rest are told to come back, unread.
func TestReadConcurrencyIsBounded(t *testing.T) {
	t.Parallel()
	h := &webhook.Handler{Secret: secret, ReadConcurrency: 2, ReadWait: 50 * time.Millisecond}
	forged := sign([]byte("some other body"))
	gate := make(chan struct{})
	var wg sync.WaitGroup
	slow := make([]*lazyBody, 2)
	slowCodes := make([]int, 2)
	for i := range slow {
		slow[i] = &lazyBody{size: 1 << 20, gate: gate, started: make(chan struct{})}
		wg.Go(func() { slowCodes[i] = post(h, fmt.Sprint("slow-", i), "pull_request", slow[i], -1, forged).Code })
	}
	for _, b := range slow {
		<-b.started
	}
	for i := range 5 {
		b := &lazyBody{size: 1 << 20}
		rec := post(h, fmt.Sprint("late-", i), "pull_request", b, -1, forged)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
			t.Errorf("request beyond the bound: %d (Retry-After %q), want 503 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
		}
		if r := b.read.Load(); r != 0 {
			t.Errorf("request beyond the bound: %d body bytes read, want none", r)
		}
	}
	close(gate)
	wg.Wait()
	for i, c := range slowCodes {
		if c != http.StatusUnauthorized {
			t.Errorf("slow forged request %d: %d, want 401 once read", i, c)
		}
	}
	// The slots are free again.
	if rec := post(h, "after", "pull_request", &lazyBody{size: 10}, -1, forged); rec.Code != http.StatusUnauthorized {
		t.Errorf("after the slow ones: %d, want 401", rec.Code)
	}
}

// A body over the limit is refused with 413 and never stored: at once
// when its length is announced, after at most the limit when it is not.
func TestOversizeBody(t *testing.T) {
	t.Parallel()
	st := stagetest.Store(t)
	ctx := context.Background()
	small := &webhook.Handler{Store: st, Secret: secret, MaxBodyBytes: 4 << 10}
	body := event("opened", 1, false, "abc")
	body = append(body[:len(body)-1], []byte(`,"padding":"`+strings.Repeat("p", 8<<10)+`"}`)...)
	if rec := post(small, "big-unknown", "pull_request", strings.NewReader(string(body)), -1, sign(body)); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("signed oversize body of unannounced length: %d, want 413", rec.Code)
	}
	if rec := post(small, "big-announced", "pull_request", strings.NewReader(string(body)), int64(len(body)), sign(body)); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("signed oversize body of announced length: %d, want 413", rec.Code)
	}
	for _, id := range []string{"big-unknown", "big-announced"} {
		if _, err := st.GetDelivery(ctx, id); err == nil {
			t.Errorf("oversize delivery %s was stored", id)
		}
	}
	// The default limit is GitHub's 25 MiB: a body announced one byte
	// longer is not read at all, one of unknown length stops at the limit.
	def := &webhook.Handler{Store: st, Secret: secret}
	announced := &lazyBody{size: 25<<20 + 1}
	if rec := post(def, "huge", "pull_request", announced, announced.size, sign(body)); rec.Code != http.StatusRequestEntityTooLarge || announced.read.Load() != 0 {
		t.Errorf("25 MiB + 1 announced: %d after reading %d bytes, want 413 after none", rec.Code, announced.read.Load())
	}
	chunked := &lazyBody{size: 30 << 20}
	if rec := post(def, "huge-chunked", "push", chunked, -1, sign(body)); rec.Code != http.StatusRequestEntityTooLarge || chunked.read.Load() > 25<<20+64<<10 {
		t.Errorf("30 MiB of unknown length: %d after reading %d bytes, want 413 after about 25 MiB", rec.Code, chunked.read.Load())
	}
	// Within the limit the same event goes through.
	ok := event("opened", 1, false, "abc")
	if rec := post(small, "fits", "pull_request", strings.NewReader(string(ok)), int64(len(ok)), sign(ok)); rec.Code != http.StatusAccepted {
		t.Errorf("body within the limit: %d %s, want 202", rec.Code, rec.Body)
	}
}

func eventAt(action string, number int, head string, updated time.Time) []byte {
	b, _ := json.Marshal(map[string]any{
		"action": action,
		"pull_request": map[string]any{"number": number, "html_url": "https://github.com/acme/api/pull/1",
			"updated_at": updated.UTC().Format(time.RFC3339), "head": map[string]any{"sha": head}},
		"repository": map[string]any{"name": "api", "owner": map[string]any{"login": "acme"}},
	})
	return b
}

// One signed body replayed under fresh delivery ids, one after another and
// all at once, is stored once and reviewed once; a redelivery under the
// same id stays a duplicate.
func TestReplayedPayloadIsReviewedOnce(t *testing.T) {
	t.Parallel()
	st := stagetest.Store(t)
	ctx := context.Background()
	_, clients := onePullRequest(t)
	head := onePRHead
	sub := &recorder{st: st}
	p := &webhook.Processor{Store: st, Clients: clients, Submitter: sub}
	h := &webhook.Handler{Store: st, Secret: secret, Nudge: p.Nudge}

	body := eventAt("synchronize", 1, head, time.Now().Add(-time.Minute))
	if rec := deliver(t, h, "first", "pull_request", body, sign(body)); rec.Code != http.StatusAccepted {
		t.Fatalf("first delivery: %d %s, want 202", rec.Code, rec.Body)
	}
	if rec := deliver(t, h, "first", "pull_request", body, sign(body)); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "duplicate delivery") {
		t.Fatalf("redelivery under the same id: %d %s, want 200 duplicate delivery", rec.Code, rec.Body)
	}
	for i := range 15 {
		rec := deliver(t, h, fmt.Sprint("replay-", i), "pull_request", body, sign(body))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "duplicate payload") {
			t.Fatalf("replay %d under a new id: %d %s, want 200 duplicate payload", i, rec.Code, rec.Body)
		}
	}
	// Racing replays of a second body: exactly one is stored.
	second := eventAt("reopened", 1, head, time.Now().Add(-time.Minute))
	var wg sync.WaitGroup
	var accepted atomic.Int64
	for i := range 15 {
		wg.Go(func() {
			if deliver(t, h, fmt.Sprint("race-", i), "pull_request", second, sign(second)).Code == http.StatusAccepted {
				accepted.Add(1)
			}
		})
	}
	wg.Wait()
	if n := accepted.Load(); n != 1 {
		t.Fatalf("%d of 15 concurrent replays accepted, want 1", n)
	}
	for i := range 15 {
		if _, err := st.GetDelivery(ctx, fmt.Sprint("replay-", i)); err == nil {
			t.Fatalf("replay %d was stored", i)
		}
	}

	p.Drain(ctx)
	if len(sub.reqs) != 2 {
		t.Fatalf("%d reviews submitted for two distinct payloads sent 32 times, want 2", len(sub.reqs))
	}
	if d, err := st.GetDelivery(ctx, "first"); err != nil || d.Status != store.DeliverySubmitted || d.ReviewID == "" {
		t.Fatalf("first delivery %+v, %v; want submitted", d, err)
	}
}

// A pull_request event dated before the replay window is refused: its
// hash may be gone, so its age is what stops the replay.
func TestStaleEventIsRefused(t *testing.T) {
	t.Parallel()
	st := stagetest.Store(t)
	ctx := context.Background()
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	h := &webhook.Handler{Store: st, Secret: secret, ReplayWindow: 72 * time.Hour, Now: func() time.Time { return now }}
	old := eventAt("opened", 1, "abc", now.Add(-73*time.Hour))
	if rec := deliver(t, h, "old", "pull_request", old, sign(old)); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "replay window") {
		t.Errorf("event 73h old: %d %s, want 200 refused as older than the window", rec.Code, rec.Body)
	}
	if _, err := st.GetDelivery(ctx, "old"); err == nil {
		t.Error("a stale event was stored")
	}
	recent := eventAt("opened", 1, "abc", now.Add(-71*time.Hour))
	if rec := deliver(t, h, "recent", "pull_request", recent, sign(recent)); rec.Code != http.StatusAccepted {
		t.Errorf("event 71h old (GitHub redelivers up to three days): %d %s, want 202", rec.Code, rec.Body)
	}
}
