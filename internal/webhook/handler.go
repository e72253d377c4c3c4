// Package webhook receives GitHub's pull_request events and turns them
// into reviews on the fleet.
//
// The design keeps the HTTP answer fast and the work durable: the handler
// checks the signature, stores the delivery in Postgres (its
// X-GitHub-Delivery id is the primary key, so a redelivery is recognised
// and ignored) and answers 202 at once. A Processor — running in the same
// `reviewfleet serve` process, any number of replicas — claims stored
// deliveries (FOR UPDATE SKIP LOCKED), reads the pull request through the
// API, skips drafts and pull requests whose files are all ignored, and
// submits the review to the fleet, whose workers run it. When posting is
// on, the Processor also posts each review once it has ended. A serve
// process that dies mid-delivery leaves it "working"; another picks it up
// after a while.
package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/google/go-github/v84/github"

	"github.com/reviewfleet/reviewfleet/store"
)

// maxPayload is GitHub's cap on webhook payloads (25 MB).
const maxPayload = 25 << 20

// Actions are the pull_request actions that submit a review.
var Actions = []string{"opened", "synchronize", "reopened", "ready_for_review"}

// Handler serves POST /webhook.
type Handler struct {
	Store *store.Store
	// Secret is the webhook secret X-Hub-Signature-256 is checked with.
	Secret []byte
	// Post marks deliveries for posting when their review ends.
	Post bool
	// Nudge, when set, is told a delivery was stored (the processor).
	Nudge func()
	Log   *slog.Logger
}

// ValidSignature reports whether sig ("sha256=HEX") is the HMAC-SHA256
// of body under secret, compared in constant time.
func ValidSignature(secret, body []byte, sig string) bool {
	hexSig, ok := strings.CutPrefix(sig, "sha256=")
	if !ok || len(secret) == 0 {
		return false
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

func reply(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg+"\n")
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		reply(w, http.StatusMethodNotAllowed, "POST only")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPayload+1))
	if err != nil {
		reply(w, http.StatusBadRequest, "read body")
		return
	}
	if len(body) > maxPayload {
		reply(w, http.StatusRequestEntityTooLarge, "payload too large")
		return
	}
	if !ValidSignature(h.Secret, body, r.Header.Get("X-Hub-Signature-256")) {
		reply(w, http.StatusUnauthorized, "bad signature")
		return
	}
	event, delivery := r.Header.Get("X-GitHub-Event"), r.Header.Get("X-GitHub-Delivery")
	switch event {
	case "ping":
		reply(w, http.StatusOK, "pong")
		return
	case "pull_request":
	default:
		reply(w, http.StatusOK, "ignored: event "+event)
		return
	}
	var ev github.PullRequestEvent
	if err := json.Unmarshal(body, &ev); err != nil || ev.PullRequest == nil || ev.Repo == nil {
		reply(w, http.StatusBadRequest, "not a pull_request event payload")
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
	host := "github.com"
	if u, err := url.Parse(pr.GetHTMLURL()); err == nil && u.Host != "" {
		host = strings.ToLower(u.Host)
	}
	d := store.Delivery{
		ID: delivery, Event: event, Action: ev.GetAction(), Post: h.Post,
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

func (h *Handler) log() *slog.Logger {
	if h.Log == nil {
		return slog.Default()
	}
	return h.Log
}
