package pullrequest

import (
	"context"
	"fmt"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/store"
)

// Request is the review of a pull request: its base commit against its
// head commit in the base repository, the head fetched from the fork when
// it comes from one, its purpose the title and description. Its change
// line is the pull request, so a review of a later push builds on the
// newest finished review of an earlier one and re-reviews only what changed.
func Request(info Info) submit.Request {
	req := submit.Request{Repo: info.BaseCloneURL, Base: info.BaseSHA, Head: info.HeadSHA, Purpose: info.Purpose(),
		ChangeKey: info.PullRequest.ChangeKey(), Origin: submit.FromPullRequest}
	if info.HeadCloneURL != info.BaseCloneURL {
		req.HeadRepo = info.HeadCloneURL
	}
	return req
}

// Submitter submits a review (*app.App).
type Submitter interface {
	Submit(ctx context.Context, req submit.Request) (string, error)
}

// Submit submits the review of a pull request and records which pull
// request and head commit it reviews. since names an earlier review to
// build on; empty takes the newest finished one of the pull request.
func Submit(ctx context.Context, sub Submitter, st *store.Store, info Info, since string) (string, error) {
	req := Request(info)
	req.Since = since
	id, err := sub.Submit(ctx, req)
	if err != nil {
		return "", fmt.Errorf("review pull request %s: %w", info.PullRequest, err)
	}
	// The review runs whatever happens here; without its pull request it
	// could not be posted, so a database blip is waited out.
	for attempt := 1; ; attempt++ {
		err = st.SetReviewPullRequest(ctx, id, info.PullRequest)
		if err == nil || attempt == 4 || ctx.Err() != nil {
			return id, err
		}
		select {
		case <-ctx.Done():
			return id, err
		case <-time.After(time.Duration(attempt) * time.Second):
		}
	}
}
