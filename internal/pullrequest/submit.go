package pullrequest

import (
	"context"
	"fmt"

	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/store"
)

// Request is the review of a pull request: its base commit against its
// head commit in the base repository, the head fetched from the fork when
// it comes from one, its purpose the title and description.
func Request(info Info) submit.Request {
	req := submit.Request{Repo: info.BaseCloneURL, Base: info.BaseSHA, Head: info.HeadSHA, Purpose: info.Purpose()}
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
// request and head commit it reviews.
func Submit(ctx context.Context, sub Submitter, st *store.Store, info Info) (string, error) {
	id, err := sub.Submit(ctx, Request(info))
	if err != nil {
		return "", fmt.Errorf("review pull request %s: %w", info.PullRequest, err)
	}
	if err := st.SetReviewPullRequest(ctx, id, info.PullRequest); err != nil {
		return id, err
	}
	return id, nil
}
