package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/google/go-github/v84/github"

	"github.com/reviewfleet/reviewfleet/internal/feedback"
	"github.com/reviewfleet/reviewfleet/internal/publish"
	"github.com/reviewfleet/reviewfleet/internal/pullrequest"
	"github.com/reviewfleet/reviewfleet/store"
)

// staleWork is how long a delivery may stay "working" before another
// processor takes it over (its processor died).
const staleWork = 10 * time.Minute

// Defaults of Processor.MaxAttempts and Processor.RetryAfter: a step that
// fails is tried again after 30 s, 1 min, 2 min and 4 min, then given up.
const (
	defaultMaxAttempts = 5
	defaultRetryAfter  = 30 * time.Second
)

// Processor submits the reviews of stored deliveries and posts them.
type Processor struct {
	Store   *store.Store
	Clients *pullrequest.Clients
	// Submitter submits reviews on the fleet (*app.App).
	Submitter pullrequest.Submitter
	// IgnorePaths skip a pull request all of whose files match.
	IgnorePaths []string
	// Poster posts ended reviews of deliveries marked for posting (nil:
	// never post).
	Poster *publish.Poster
	// Feedback records the feedback deliveries (review comments, issue
	// comments, closed pull requests) by reading the pull request's
	// feedback; nil skips them.
	Feedback *feedback.Syncer
	// Interval is how often the processor looks for work without a nudge
	// (default 5s).
	Interval time.Duration
	// MaxAttempts is how many times submitting, and then posting, a
	// delivery's review is tried before the delivery fails (default 5);
	// RetryAfter is the wait after the first failure, doubled after each
	// (default 30s). GitHub or the fleet being briefly away loses nothing.
	MaxAttempts int
	RetryAfter  time.Duration
	Log         *slog.Logger

	once  sync.Once
	nudge chan struct{}
}

// Nudge wakes the processor up (a delivery was stored).
func (p *Processor) Nudge() {
	select {
	case p.wake() <- struct{}{}:
	default:
	}
}

func (p *Processor) wake() chan struct{} {
	p.once.Do(func() { p.nudge = make(chan struct{}, 1) })
	return p.nudge
}

// Run processes deliveries until ctx ends.
func (p *Processor) Run(ctx context.Context) error {
	wake := p.wake()
	every := p.Interval
	if every <= 0 {
		every = 5 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		p.Drain(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-t.C:
		}
	}
}

// Drain processes every delivery waiting, then posts every ended review
// waiting to be posted.
func (p *Processor) Drain(ctx context.Context) {
	for ctx.Err() == nil {
		d, err := p.Store.ClaimDelivery(ctx, staleWork)
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if err != nil {
			p.log().Warn("claim webhook delivery", "err", err)
			break
		}
		status, reviewID, note := p.processAlive(ctx, d)
		if status == store.DeliveryFailed && reviewID == "" {
			p.retry(ctx, d, store.DeliveryPending, note)
			continue
		}
		if err := p.Store.FinishDelivery(context.WithoutCancel(ctx), d.ID, status, reviewID, note); err != nil {
			p.log().Warn("finish webhook delivery", "delivery", d.ID, "err", err)
		}
	}
	if p.Poster == nil || ctx.Err() != nil {
		return
	}
	ds, err := p.Store.DeliveriesToPost(ctx, 20)
	if err != nil {
		p.log().Warn("list reviews to post", "err", err)
		return
	}
	for _, d := range ds {
		res, err := p.Poster.Post(ctx, d.ReviewID)
		if err != nil {
			p.log().Warn("post review", "delivery", d.ID, "review", d.ReviewID, "err", err)
			p.retry(ctx, d, store.DeliverySubmitted, "post: "+err.Error())
			continue
		}
		note := fmt.Sprintf("github review %d", res.GitHubReviewID)
		if err := p.Store.FinishDelivery(context.WithoutCancel(ctx), d.ID, store.DeliveryPosted, "", note); err != nil {
			p.log().Warn("finish webhook delivery", "delivery", d.ID, "err", err)
		}
	}
}

// processAlive is process, touching the delivery every minute meanwhile:
// a first clone of a large repository may outlast staleWork, and another
// replica must not take the delivery over and submit it twice.
func (p *Processor) processAlive(ctx context.Context, d store.Delivery) (status, reviewID, note string) {
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if err := p.Store.TouchDelivery(ctx, d.ID); err != nil {
					p.log().Warn("touch webhook delivery", "delivery", d.ID, "err", err)
				}
			}
		}
	}()
	return p.process(ctx, d)
}

// retry schedules a failed step of d again (status: the delivery's status
// before the step), or fails d after MaxAttempts.
func (p *Processor) retry(ctx context.Context, d store.Delivery, status, note string) {
	maxAttempts, after := p.MaxAttempts, p.RetryAfter
	if maxAttempts <= 0 {
		maxAttempts = defaultMaxAttempts
	}
	if after <= 0 {
		after = defaultRetryAfter
	}
	set, err := p.Store.RetryDelivery(context.WithoutCancel(ctx), d.ID, status, note, maxAttempts, after)
	if err != nil {
		p.log().Warn("schedule webhook delivery again", "delivery", d.ID, "err", err)
		return
	}
	if set == store.DeliveryFailed {
		p.log().Warn("webhook delivery failed for good", "delivery", d.ID, "attempts", maxAttempts, "err", note)
	}
}

// process submits one delivery's review; it returns the delivery's new
// status, the review and a note.
func (p *Processor) process(ctx context.Context, d store.Delivery) (status, reviewID, note string) {
	if isFeedback(d.Event, d.Action) {
		return p.record(ctx, d)
	}
	gc, _, err := p.Clients.For(ctx, d.PR.Host, d.PR.Owner, d.PR.Repo)
	if err != nil {
		return store.DeliveryFailed, "", err.Error()
	}
	info, err := pullrequest.Get(ctx, gc, d.PR)
	if err != nil {
		return store.DeliveryFailed, "", err.Error()
	}
	info.Host = d.PR.Host
	switch {
	case info.Draft:
		return store.DeliverySkipped, "", "draft"
	case info.State != "" && info.State != "open":
		return store.DeliverySkipped, "", "pull request " + info.State
	}
	if len(p.IgnorePaths) > 0 {
		files, err := pullrequest.Files(ctx, gc, d.PR)
		if err != nil {
			return store.DeliveryFailed, "", err.Error()
		}
		if len(files) > 0 && allIgnored(files, p.IgnorePaths) {
			return store.DeliverySkipped, "", "every changed file is in webhook.ignore_paths"
		}
	}
	id, err := pullrequest.Submit(ctx, p.Submitter, p.Store, info, "")
	if err != nil {
		return store.DeliveryFailed, id, err.Error()
	}
	p.log().Info("review submitted", "delivery", d.ID, "pr", info.PullRequest.String(), "head", info.HeadSHA, "review", id)
	return store.DeliverySubmitted, id, ""
}

// allIgnored reports whether every file (and a rename's old path)
// matches one of the globs.
func allIgnored(files []*github.CommitFile, globs []string) bool {
	match := func(name string) bool {
		for _, g := range globs {
			if ok, _ := doublestar.Match(g, name); ok {
				return true
			}
		}
		return false
	}
	for _, f := range files {
		if !match(f.GetFilename()) || (f.GetPreviousFilename() != "" && !match(f.GetPreviousFilename())) {
			return false
		}
	}
	return true
}

func (p *Processor) log() *slog.Logger {
	if p.Log == nil {
		return slog.Default()
	}
	return p.Log
}
