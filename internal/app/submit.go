package app

import (
	"context"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
)

// Submit prepares a change, stores it as a queued review and admits what
// the fleet has room for (enqueueing the first stage of each admitted
// review). It returns the review ID. A change with no reviewable file
// moves straight on to its report once admitted.
//
// Submit starts the review's trace: its root span covers the preparation
// (clone, diff, snapshot) and the first enqueue, and every task of the
// review, in any process, joins it.
//
// Submit admits through the fleet's pipeline: on an in-process Redis, a
// review is run with RunReview, whose in-process fleet admits it alone.
func (a *App) Submit(ctx context.Context, req submit.Request) (string, error) {
	return a.submission(a.Cfg, a.Pipeline, "").Submit(ctx, req)
}

// Prepare reads and parses a change into the review to store, queued,
// with its dedupe key.
func (a *App) Prepare(ctx context.Context, req submit.Request) (review.NewReview, error) {
	return a.prepare(ctx, a.Cfg, req)
}

// prepare is Prepare with the configuration cfg: the app's, or the app's
// with one review's own harness settings.
func (a *App) prepare(ctx context.Context, cfg config.Config, req submit.Request) (review.NewReview, error) {
	if req.Repos == nil && req.CacheDir == "" {
		// Clones come from this host's cache, and the work-tree copy of a
		// diff review goes under the same directory.
		req.Repos, req.CacheDir = a.Snapshots, a.Snapshots.Dir
	}
	nr, err := submit.Prepare(ctx, cfg, req)
	if err != nil {
		return nr, err
	}
	for _, w := range nr.ConfigWarnings {
		a.Log.Warn("invalid repository configuration, using the defaults for it", "file", w.File, "line", w.Line, "problem", w.Message)
	}
	digest := a.promptsDigest()
	if err := submit.Incremental(ctx, a.Store, cfg, req, &nr, digest); err != nil {
		return nr, err
	}
	nr.Queued = true
	nr.DedupeKey = submit.DedupeKey(nr, digest)
	return nr, nil
}

// Create stores a prepared review, with ctx's trace context (see
// pipeline.WithTraceContext), and admits queued reviews.
func (a *App) Create(ctx context.Context, nr review.NewReview) (string, error) {
	return a.create(ctx, a.Pipeline, nr)
}

// create is Create admitting through p.
func (a *App) create(ctx context.Context, p *pipeline.Pipeline, nr review.NewReview) (string, error) {
	nr.Config = pipeline.WithTraceContext(ctx, nr.Config)
	id, err := a.Store.CreateReview(ctx, nr)
	if err != nil {
		return "", err
	}
	if _, err := p.Admit(ctx); err != nil {
		// The review waits as queued: the scheduler admits it later.
		a.Log.Warn("admit reviews", "review", id, "err", err)
	}
	return id, nil
}

// Submission submits the one review a RunReview runs: prepared with that
// run's settings and, when ID is set (this process is the review's only
// fleet), stored under that ID and admitted alone.
type Submission struct {
	a        *App
	cfg      config.Config
	pipeline *pipeline.Pipeline
	id       string
}

func (a *App) submission(cfg config.Config, p *pipeline.Pipeline, id string) *Submission {
	return &Submission{a: a, cfg: cfg, pipeline: p, id: id}
}

// Submit prepares a change and creates its review (see App.Submit).
func (s *Submission) Submit(ctx context.Context, req submit.Request) (id string, err error) {
	ctx, span := submit.StartSpan(ctx)
	defer func() { submit.EndSpan(span, id, err) }()
	nr, err := s.Prepare(ctx, req)
	if err != nil {
		return "", err
	}
	return s.Create(ctx, nr)
}

// Prepare reads and parses a change into the review to store (see
// App.Prepare).
func (s *Submission) Prepare(ctx context.Context, req submit.Request) (review.NewReview, error) {
	return s.a.prepare(ctx, s.cfg, req)
}

// Create stores a prepared review, queued, and admits it (see App.Create).
func (s *Submission) Create(ctx context.Context, nr review.NewReview) (string, error) {
	nr.Queued = true
	if s.id != "" {
		nr.ID = s.id
	}
	return s.a.create(ctx, s.pipeline, nr)
}

// promptsDigest is the digest of the app's prompt set (see
// submit.PromptsDigest).
func (a *App) promptsDigest() string {
	if a.Prompts == nil {
		return "" // a nil *prompts.Set is not a nil submit.Prompts
	}
	return submit.PromptsDigest(a.Prompts)
}
