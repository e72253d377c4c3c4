package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"

	"github.com/google/uuid"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/store"
)

// Submit prepares a change, stores it as a queued review and admits what
// the fleet has room for (enqueueing the first stage of each admitted
// review). It returns the review ID. A change with no reviewable file
// moves straight on to its report once admitted.
//
// Submit starts the review's trace: its root span covers the preparation
// (clone, diff, snapshot) and the first enqueue, and every task of the
// review, in any process, joins it.
func (a *App) Submit(ctx context.Context, req submit.Request) (id string, err error) {
	ctx, span := submit.StartSpan(ctx)
	defer func() { submit.EndSpan(span, id, err) }()
	nr, err := a.Prepare(ctx, req)
	if err != nil {
		return "", err
	}
	if a.LocalRedis {
		// This process is the review's only fleet: admit this review
		// alone, never put another review's tasks on an in-process queue.
		nr.ID = uuid.NewString()
		a.Pipeline.AdmitOnly = nr.ID
	}
	return a.Create(ctx, nr)
}

// Prepare reads and parses a change into the review to store, queued,
// with its dedupe key.
func (a *App) Prepare(ctx context.Context, req submit.Request) (store.NewReview, error) {
	if req.Repos == nil && req.CacheDir == "" {
		// Clones come from this host's cache, and the work-tree copy of a
		// diff review goes under the same directory.
		req.Repos, req.CacheDir = a.Snapshots, a.Snapshots.Dir
	}
	nr, err := submit.Prepare(ctx, a.Cfg, req)
	if err != nil {
		return nr, err
	}
	for _, w := range nr.ConfigWarnings {
		a.Log.Warn("invalid repository configuration, using the defaults for it", "file", w.File, "line", w.Line, "problem", w.Message)
	}
	if err := a.incremental(ctx, req, &nr); err != nil {
		return nr, err
	}
	nr.Queued = true
	nr.DedupeKey = a.DedupeKey(nr)
	return nr, nil
}

// Create stores a prepared review, with ctx's trace context (see
// pipeline.WithTraceContext), and admits queued reviews.
func (a *App) Create(ctx context.Context, nr store.NewReview) (string, error) {
	nr.Config = pipeline.WithTraceContext(ctx, nr.Config)
	id, err := a.Store.CreateReview(ctx, nr)
	if err != nil {
		return "", err
	}
	if _, err := a.Pipeline.Admit(ctx); err != nil {
		// The review waits as queued: the scheduler admits it later.
		a.Log.Warn("admit reviews", "review", id, "err", err)
	}
	return id, nil
}

// DedupeKey identifies what a review would review and how: the
// repository, both commits (or, for a diff file, the diff itself), the
// configuration snapshot (models and every setting) and the prompts. Two
// reviews with the same key would give the same answer.
func (a *App) DedupeKey(nr store.NewReview) string {
	h := sha256.New()
	fmt.Fprintf(h, "repo %s\nbase %s\nhead %s\nsource %s\n", submit.StripCredentials(nr.Repo), nr.BaseSHA, nr.HeadSHA, nr.Source)
	h.Write(reviewSettings(nr.Config))
	if nr.BaseSHA == "" || nr.HeadSHA == "" {
		for _, f := range nr.Files {
			fmt.Fprintf(h, "\nfile %s\n", f.Path)
			_, _ = io.WriteString(h, f.Diff)
		}
	}
	_, _ = io.WriteString(h, a.promptsDigest())
	return hex.EncodeToString(h.Sum(nil))
}

// reviewSettings is the part of a configuration snapshot that shapes a
// review's answer: fleet, queue and schedule settings do not.
func reviewSettings(snapshot []byte) []byte {
	var cfg config.Config
	if err := json.Unmarshal(snapshot, &cfg); err != nil {
		return snapshot
	}
	cfg.Worker, cfg.Scheduler, cfg.Telemetry = config.Worker{}, config.Scheduler{}, config.Telemetry{}
	cfg.Fleet, cfg.Bulk, cfg.GitHub, cfg.Webhook = config.Fleet{}, config.Bulk{}, config.GitHub{}, config.Webhook{}
	b, err := json.Marshal(cfg)
	if err != nil {
		return snapshot
	}
	return b
}

func (a *App) promptsDigest() string {
	if a.Prompts == nil {
		return ""
	}
	h := sha256.New()
	for _, name := range a.Prompts.Names() {
		text, _ := a.Prompts.File(name)
		fmt.Fprintf(h, "%s %d\n%s", name, len(text), text)
	}
	return hex.EncodeToString(h.Sum(nil))
}
