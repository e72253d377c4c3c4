// Package webhook receives GitHub's pull_request events and turns them
// into reviews on the fleet.
//
// The design keeps the HTTP answer fast and the work durable: the handler
// checks the signature, stores the delivery in Postgres (its
// X-GitHub-Delivery id is the primary key, so a redelivery is recognised
// and ignored; the payload's SHA-256 is unique too, so the same signed
// body replayed under a new id is ignored as well) and answers 202 at once. A Processor — running in the same
// `reviewfleet serve` process, any number of replicas — claims stored
// deliveries (FOR UPDATE SKIP LOCKED), reads the pull request through the
// API, skips drafts and pull requests whose files are all ignored, and
// submits the review to the fleet, whose workers run it. When posting is
// on, the Processor also posts each review once it has ended. A serve
// process that dies mid-delivery leaves it "working"; another picks it up
// after a while.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v84/github"

	"github.com/reviewfleet/reviewfleet/store"
)

// Defaults of the Handler's limits.
const (
	// DefaultMaxBodyBytes is GitHub's cap on webhook payloads (25 MiB).
	DefaultMaxBodyBytes = 25 << 20
	// DefaultReadConcurrency bounds the bodies read at once before their
	// signature is known: each may be DefaultMaxBodyBytes in memory.
	DefaultReadConcurrency = 4
	// DefaultReplayWindow is how far back GitHub redelivers (three days).
	DefaultReplayWindow = 72 * time.Hour
	// readWaitBeyondGrace is how much longer than BodyGrace a request
	// waits for a read slot before it is answered 503: a slot held by a
	// trickling sender is free again within BodyGrace, so a real delivery
	// outwaits four of them.
	readWaitBeyondGrace = time.Second
	// DefaultMinBodyRate is the slowest a body may arrive once it holds a
	// read slot, in bytes a second (2 MiB/s).
	DefaultMinBodyRate = 2 << 20
	// DefaultBodyGrace is the time a body is given on top of its bytes at
	// the minimum rate: what a small payload has to arrive in.
	DefaultBodyGrace = 2 * time.Second
)

// Actions are the pull_request actions that submit a review.
var Actions = []string{"opened", "synchronize", "reopened", "ready_for_review"}

// Handler serves POST /webhook.
//
// Everything about a request is hostile until its signature checks out,
// so the handler spends as little as it can before then: a request
// without a well-formed X-Hub-Signature-256, or announcing a body over
// MaxBodyBytes, is answered without reading the body; the others are read
// through http.MaxBytesReader, at most ReadConcurrency at a time, hashing
// as they are read; only a pull_request event's body is kept in memory.
// A body holding a read slot must keep pace: by any moment it must have
// delivered MinBodyRate bytes a second beyond the first BodyGrace, or its
// connection's read deadline cuts it off and the slot is free again. A
// sender trickling a forged body thus holds a slot for about BodyGrace,
// whatever length it announces.
type Handler struct {
	Store *store.Store
	// Secret is the webhook secret X-Hub-Signature-256 is checked with.
	Secret []byte
	// Post marks deliveries for posting when their review ends.
	Post bool
	// Nudge, when set, is told a delivery was stored (the processor).
	Nudge func()
	// MaxBodyBytes refuses larger bodies with 413 (default
	// DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// ReadConcurrency is how many bodies are read at once (default
	// DefaultReadConcurrency); ReadWait is how long a request waits for
	// its turn before it is answered 503 with Retry-After (default
	// BodyGrace + 1s: longer than a trickling sender keeps a slot).
	ReadConcurrency int
	ReadWait        time.Duration
	// MinBodyRate (bytes a second, default DefaultMinBodyRate) and
	// BodyGrace (default DefaultBodyGrace) pace a body's arrival: after
	// BodyGrace+n/MinBodyRate since its slot was taken it must have sent
	// more than n bytes.
	MinBodyRate int64
	BodyGrace   time.Duration
	// ReplayWindow refuses pull_request events whose pull request was last
	// updated longer ago (default DefaultReplayWindow): a body captured
	// once cannot be replayed after its payload hash may have been pruned.
	ReplayWindow time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	Log *slog.Logger

	once  sync.Once
	slots chan *bytes.Buffer // one per read slot, with its buffer
}

// ValidSignature reports whether sig ("sha256=HEX") is the HMAC-SHA256
// of body under secret, compared in constant time.
func ValidSignature(secret, body []byte, sig string) bool {
	want, ok := parseSignature(sig)
	if !ok || len(secret) == 0 {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return hmac.Equal(want, mac.Sum(nil))
}

// parseSignature decodes "sha256=" and 64 hex digits.
func parseSignature(sig string) ([]byte, bool) {
	hexSig, ok := strings.CutPrefix(sig, "sha256=")
	if !ok || len(hexSig) != 2*sha256.Size {
		return nil, false
	}
	got, err := hex.DecodeString(hexSig)
	return got, err == nil
}

func reply(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg+"\n")
}

// acquire takes a read slot, waiting up to ReadWait, and with it the
// slot's buffer; release gives both back. The buffers are kept and reused:
// a flood of forged bodies then costs at most ReadConcurrency buffers of
// MaxBodyBytes, instead of new ones faster than they are collected.
func (h *Handler) acquire(ctx context.Context) (buf *bytes.Buffer, release func(), ok bool) {
	h.once.Do(func() {
		n := h.ReadConcurrency
		if n <= 0 {
			n = DefaultReadConcurrency
		}
		h.slots = make(chan *bytes.Buffer, n)
		for range n {
			h.slots <- new(bytes.Buffer)
		}
	})
	select {
	case buf = <-h.slots:
	default:
		wait := h.ReadWait
		if wait <= 0 {
			wait = h.bodyGrace() + readWaitBeyondGrace
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case buf = <-h.slots:
		case <-t.C:
			return nil, nil, false
		case <-ctx.Done():
			return nil, nil, false
		}
	}
	buf.Reset()
	return buf, func() { h.slots <- buf }, true
}

// readBody reads the body through the size limit into the HMAC and the
// payload hash, and into buf unless buf is nil. It answers the request
// itself and returns ok false when the body is too large, cannot be read
// or does not match the signature.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, sig []byte, buf *bytes.Buffer) (sum []byte, ok bool) {
	mac, payload := hmac.New(sha256.New, h.Secret), sha256.New()
	sinks := []io.Writer{mac, payload}
	if buf != nil {
		if r.ContentLength > 0 {
			buf.Grow(int(r.ContentLength)) // at most MaxBodyBytes, checked before
		}
		sinks = append(sinks, buf)
	}
	body := h.paced(w, r.Body)
	if _, err := io.Copy(io.MultiWriter(sinks...), http.MaxBytesReader(w, body, h.maxBytes())); err != nil {
		var ne net.Error
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			reply(w, http.StatusRequestEntityTooLarge, "payload too large")
		} else if errors.As(err, &ne) && ne.Timeout() {
			h.log().Warn("webhook body too slow: cut off", "remote", r.RemoteAddr, "bytes", body.n,
				"announced", r.ContentLength, "after", time.Since(body.start).Round(time.Millisecond))
			reply(w, http.StatusRequestTimeout, "body too slow")
		} else {
			reply(w, http.StatusBadRequest, "read body")
		}
		return nil, false
	}
	if !hmac.Equal(sig, mac.Sum(nil)) {
		reply(w, http.StatusUnauthorized, "bad signature")
		return nil, false
	}
	return payload.Sum(nil), true
}

// pacedBody reads a request body under a read deadline that moves with
// what has arrived: start + grace + n/rate after n bytes. A sender keeping
// up with rate never meets it; one trickling meets it about grace after
// start, however long the body it announced.
type pacedBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	start time.Time
	grace time.Duration
	rate  int64
	n     int64
}

// paced starts pacing r's body: its first deadline is BodyGrace from now.
func (h *Handler) paced(w http.ResponseWriter, body io.ReadCloser) *pacedBody {
	p := &pacedBody{ReadCloser: body, rc: http.NewResponseController(w), start: time.Now(), grace: h.bodyGrace(), rate: h.MinBodyRate}
	if p.rate <= 0 {
		p.rate = DefaultMinBodyRate
	}
	p.extend()
	return p
}

func (h *Handler) bodyGrace() time.Duration {
	if h.BodyGrace <= 0 {
		return DefaultBodyGrace
	}
	return h.BodyGrace
}

// extend moves the connection's read deadline to what the bytes read so
// far have earned. A writer without a connection (a test recorder) has no
// deadline to set.
func (p *pacedBody) extend() {
	_ = p.rc.SetReadDeadline(p.start.Add(p.grace + time.Duration(p.n*int64(time.Second)/p.rate)))
}

func (p *pacedBody) Read(b []byte) (int, error) {
	n, err := p.ReadCloser.Read(b)
	if n > 0 {
		p.n += int64(n)
		p.extend()
	}
	return n, err
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		reply(w, http.StatusMethodNotAllowed, "POST only")
		return
	}
	// Refused before a byte of the body is read: no signature, no work.
	sig, ok := parseSignature(r.Header.Get("X-Hub-Signature-256"))
	if !ok || len(h.Secret) == 0 {
		reply(w, http.StatusUnauthorized, "missing or malformed X-Hub-Signature-256")
		return
	}
	if r.ContentLength > h.maxBytes() {
		reply(w, http.StatusRequestEntityTooLarge, "payload too large")
		return
	}
	buf, release, ok := h.acquire(r.Context())
	if !ok {
		w.Header().Set("Retry-After", "5")
		reply(w, http.StatusServiceUnavailable, "busy: try again shortly")
		return
	}
	defer release()
	event, delivery := r.Header.Get("X-GitHub-Event"), r.Header.Get("X-GitHub-Delivery")
	// Only a pull_request event's body is needed after the signature
	// check; any other is hashed as it streams past and dropped. body is
	// the slot's buffer: nothing may keep it past release.
	keep := buf
	if event != "pull_request" && !slices.Contains(FeedbackEvents, event) {
		keep = nil
	}
	sum, ok := h.readBody(w, r, sig, keep)
	if !ok {
		return
	}
	body := buf.Bytes()
	switch event {
	case "ping":
		reply(w, http.StatusOK, "pong")
		return
	case "pull_request":
	case "pull_request_review_comment", "issue_comment":
		h.serveFeedback(w, r, event, delivery, body, sum)
		return
	default:
		reply(w, http.StatusOK, "ignored: event "+event)
		return
	}
	var ev github.PullRequestEvent
	if err := json.Unmarshal(body, &ev); err != nil || ev.PullRequest == nil || ev.Repo == nil {
		reply(w, http.StatusBadRequest, "not a pull_request event payload")
		return
	}
	if ev.GetAction() == "closed" {
		h.serveFeedback(w, r, event, delivery, body, sum)
		return
	}
	if !slices.Contains(Actions, ev.GetAction()) {
		reply(w, http.StatusOK, "ignored: action "+ev.GetAction())
		return
	}
	if delivery == "" {
		reply(w, http.StatusBadRequest, "missing X-GitHub-Delivery")
		return
	}
	pr := ev.GetPullRequest()
	// A payload older than the window may outlive its remembered hash: the
	// pull request's updated_at, which every action submitting a review
	// moves, dates it.
	if at := pr.GetUpdatedAt(); !at.IsZero() && h.now().Sub(at.Time) > h.replayWindow() {
		h.log().Warn("stale webhook delivery refused", "delivery", delivery, "updated_at", at.Time, "window", h.replayWindow())
		reply(w, http.StatusOK, "ignored: pull request last updated "+at.Time.UTC().Format(time.RFC3339)+", older than the replay window")
		return
	}
	host := "github.com"
	if u, err := url.Parse(pr.GetHTMLURL()); err == nil && u.Host != "" {
		host = strings.ToLower(u.Host)
	}
	d := store.Delivery{
		ID: delivery, Event: event, Action: ev.GetAction(), Post: h.Post, PayloadSHA256: sum,
		PR: store.PullRequest{Host: host, Owner: ev.GetRepo().GetOwner().GetLogin(), Repo: ev.GetRepo().GetName(),
			Number: pr.GetNumber(), HeadSHA: pr.GetHead().GetSHA()},
	}
	added, err := h.Store.AddDelivery(r.Context(), d)
	if err != nil {
		h.log().Error("store webhook delivery", "delivery", delivery, "err", err)
		reply(w, http.StatusServiceUnavailable, "could not store the delivery")
		return
	}
	if !added {
		if _, err := h.Store.GetDelivery(r.Context(), delivery); errors.Is(err, store.ErrNotFound) {
			h.log().Warn("webhook payload seen before under another delivery id: ignored", "delivery", delivery,
				"payload_sha256", hex.EncodeToString(sum))
			reply(w, http.StatusOK, "duplicate payload: ignored")
			return
		}
		reply(w, http.StatusOK, "duplicate delivery: ignored")
		return
	}
	if pr.GetDraft() {
		// Recorded, so a redelivery is recognised too; ready_for_review
		// brings it back.
		if err := h.Store.FinishDelivery(context.WithoutCancel(r.Context()), delivery, store.DeliverySkipped, "", "draft"); err != nil {
			h.log().Error("skip draft delivery", "delivery", delivery, "err", err)
		}
		reply(w, http.StatusOK, "skipped: draft")
		return
	}
	if h.Nudge != nil {
		h.Nudge()
	}
	reply(w, http.StatusAccepted, "queued")
}

func (h *Handler) maxBytes() int64 {
	if h.MaxBodyBytes > 0 {
		return h.MaxBodyBytes
	}
	return DefaultMaxBodyBytes
}

func (h *Handler) replayWindow() time.Duration {
	if h.ReplayWindow > 0 {
		return h.ReplayWindow
	}
	return DefaultReplayWindow
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Handler) log() *slog.Logger {
	if h.Log == nil {
		return slog.Default()
	}
	return h.Log
}
