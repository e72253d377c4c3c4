package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/publish"
	"github.com/reviewfleet/reviewfleet/internal/pullrequest"
	"github.com/reviewfleet/reviewfleet/internal/submit"
)

// cmdPost posts a finished review on the pull request it was submitted
// for (`review --pr`, bulk --github-org, the webhook server).
func cmdPost(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("post", stderr)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return exitError{code: exitUsage, err: errors.New("usage: reviewfleet post REVIEW_ID")}
	}
	a, closeApp, err := open(ctx, *cfgPath, stderr, app.Options{}, nil)
	if err != nil {
		return err
	}
	defer closeApp()
	return postReview(ctx, a, pos[0], stdout)
}

// checkPRFlags checks --pr and --post against the other flags of review.
func checkPRFlags(prURL string, post, noWait, demo bool, req submit.Request) error {
	switch {
	case prURL == "" && post:
		return errors.New("--post needs --pr URL")
	case prURL == "":
		return nil
	case demo || req.Repo != "" || req.Base != "" || req.Head != "" || req.DiffFile != "":
		return errors.New("--pr takes the repository and both commits from the pull request: drop --repo, --base, --head, --diff and --demo")
	case post && noWait:
		return errors.New("--post waits for the review to end: drop --no-wait (or run `reviewfleet post ID` later)")
	}
	_, err := pullrequest.ParseURL(prURL)
	return err
}

// submitPR reads a pull request and submits its review.
func submitPR(ctx context.Context, a *app.App, sub *app.Submission, raw, since string, stderr io.Writer) (string, error) {
	id, err := pullrequest.ParseURL(raw)
	if err != nil {
		return "", exitError{code: exitUsage, err: err}
	}
	gc, _, err := a.GitHub.For(ctx, id.Host, id.Owner, id.Repo)
	if err != nil {
		return "", err
	}
	info, err := pullrequest.Get(ctx, gc, id)
	if err != nil {
		return "", err
	}
	info.Host = id.Host
	fmt.Fprintf(stderr, "pull request %s: %s..%s\n", info.PullRequest, short(info.BaseSHA), short(info.HeadSHA))
	return pullrequest.Submit(ctx, sub, a.Store, info, since)
}

// postReview posts a review and says what it did.
func postReview(ctx context.Context, a *app.App, id string, w io.Writer) error {
	p := &publish.Poster{Store: a.Store, Clients: a.GitHub, Log: a.Log, Feedback: feedbackSyncer(a)}
	res, err := p.Post(ctx, id)
	if err != nil {
		return err
	}
	verb := "posted"
	if res.Updated {
		verb = "updated"
	}
	fmt.Fprintf(w, "%s GitHub review %d on %s: %d inline comments (%d new), %d findings in the body, %d commented on an earlier push, %d dismissed earlier (not posted)\n",
		verb, res.GitHubReviewID, res.PR, res.Inline, res.New, res.InBody, res.AlreadyPosted, res.Dismissed)
	return nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
