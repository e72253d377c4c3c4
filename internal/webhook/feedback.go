package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reviewfleet/reviewfleet/store"
)

// FeedbackEvents are the events that carry feedback on posted reviews:
// a reply in a review thread, a comment on the conversation, and a pull
// request closing (merged or not). Their deliveries are stored like
// pull_request ones and recorded by reading the pull request's feedback.
var FeedbackEvents = []string{"pull_request_review_comment", "issue_comment"}

// isFeedback reports whether a delivery records feedback instead of
// submitting a review.
func isFeedback(event, action string) bool {
	return slices.Contains(FeedbackEvents, event) || (event == "pull_request" && action == "closed")
}

// feedbackPayload is what a feedback event's payload must name: the
// repository, the pull request (or the issue that is one) and when the
// comment was last changed.
type feedbackPayload struct {
	Action      string `json:"action"`
	PullRequest *struct {
		Number  int       `json:"number"`
		HTMLURL string    `json:"html_url"`
		Updated time.Time `json:"updated_at"`
	} `json:"pull_request"`
	Issue *struct {
		Number      int             `json:"number"`
		HTMLURL     string          `json:"html_url"`
		PullRequest json.RawMessage `json:"pull_request"`
	} `json:"issue"`
	Comment *struct {
		Updated time.Time `json:"updated_at"`
	} `json:"comment"`
	Repository *struct {
		Name  string `json:"name"`
		Owner struct {
			Login string `json:"login"`
		} `json:"owner"`
	} `json:"repository"`
}

// errNotPullRequest: an issue comment on an issue that is no pull request.
var errNotPullRequest = errors.New("not about a pull request")

// parseFeedback reads a feedback event's pull request and the time that
// dates the payload.
func parseFeedback(body []byte) (action string, pr store.PullRequest, at time.Time, err error) {
	var p feedbackPayload
	if err := json.Unmarshal(body, &p); err != nil || p.Repository == nil || p.Repository.Name == "" || p.Repository.Owner.Login == "" {
		return "", store.PullRequest{}, time.Time{}, errors.New("not a feedback event payload")
	}
	pr = store.PullRequest{Owner: p.Repository.Owner.Login, Repo: p.Repository.Name}
	htmlURL := ""
	switch {
	case p.PullRequest != nil:
		pr.Number, htmlURL, at = p.PullRequest.Number, p.PullRequest.HTMLURL, p.PullRequest.Updated
	case p.Issue != nil:
		if len(p.Issue.PullRequest) == 0 || string(p.Issue.PullRequest) == "null" {
			return p.Action, pr, at, errNotPullRequest
		}
		pr.Number, htmlURL = p.Issue.Number, p.Issue.HTMLURL
	}
	if p.Comment != nil && !p.Comment.Updated.IsZero() {
		at = p.Comment.Updated
	}
	if pr.Number <= 0 {
		return "", store.PullRequest{}, time.Time{}, errors.New("the payload names no pull request")
	}
	pr.Host = "github.com"
	if u, err := url.Parse(htmlURL); err == nil && u.Host != "" {
		pr.Host = strings.ToLower(u.Host)
	}
	return p.Action, pr, at, nil
}

// record records a feedback delivery: it reads the pull request's
// feedback (reactions arrive only that way) and its fate.
func (p *Processor) record(ctx context.Context, d store.Delivery) (status, reviewID, note string) {
	if p.Feedback == nil {
		return store.DeliverySkipped, "", "feedback is not collected (no GitHub credentials)"
	}
	ref := store.PullRequestRef{Repository: store.Repository{Host: d.PR.Host, Owner: d.PR.Owner, Repo: d.PR.Repo}, Number: d.PR.Number}
	// The read below starts after this: it sees what every delivery of
	// the pull request received so far announced.
	if _, err := p.Store.CoverFeedbackDeliveries(ctx, d.PR, d.ID); err != nil {
		return store.DeliveryFailed, "", err.Error()
	}
	st, err := p.Feedback.SyncPR(ctx, ref, "webhook")
	if err != nil {
		return store.DeliveryFailed, "", err.Error()
	}
	if st.PullRequests == 0 {
		return store.DeliverySkipped, "", "nothing of the fleet's is posted on this pull request"
	}
	return store.DeliveryRecorded, "", plural(st.Added, "new feedback row")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// serveFeedback stores a feedback delivery for the processor: a review
// comment, an issue comment on a pull request, or a pull request closed.
func (h *Handler) serveFeedback(w http.ResponseWriter, r *http.Request, event, delivery string, body, sum []byte) {
	action, pr, at, err := parseFeedback(body)
	if errors.Is(err, errNotPullRequest) {
		reply(w, http.StatusOK, "ignored: a comment on an issue, not a pull request")
		return
	}
	if err != nil {
		reply(w, http.StatusBadRequest, err.Error())
		return
	}
	if delivery == "" {
		reply(w, http.StatusBadRequest, "missing X-GitHub-Delivery")
		return
	}
	if !at.IsZero() && h.now().Sub(at) > h.replayWindow() {
		h.log().Warn("stale webhook delivery refused", "delivery", delivery, "updated_at", at, "window", h.replayWindow())
		reply(w, http.StatusOK, "ignored: last updated "+at.UTC().Format(time.RFC3339)+", older than the replay window")
		return
	}
	added, err := h.Store.AddDelivery(r.Context(), store.Delivery{ID: delivery, Event: event, Action: action, PR: pr, PayloadSHA256: sum})
	if err != nil {
		h.log().Error("store webhook delivery", "delivery", delivery, "err", err)
		reply(w, http.StatusServiceUnavailable, "could not store the delivery")
		return
	}
	if !added {
		reply(w, http.StatusOK, "duplicate delivery: ignored")
		return
	}
	if h.Nudge != nil {
		h.Nudge()
	}
	reply(w, http.StatusAccepted, "queued: feedback")
}
