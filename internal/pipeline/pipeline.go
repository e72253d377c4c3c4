package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/metrics"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// Enqueuer hands tasks to the queue; *asynq.Client satisfies it.
type Enqueuer interface {
	EnqueueContext(ctx context.Context, task *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error)
}

// TriageFunc is the manager: it decides which candidate findings go on.
// The manager step of Steps runs a Pipeline's Triage (Triage in this
// package; nil leaves every candidate active).
type TriageFunc func(findings []review.Finding, changed map[string][]int, cfg config.Manager) []review.Triage

// Pipeline moves reviews through their stages.
type Pipeline struct {
	Store    *store.Store
	Queue    Enqueuer
	Triage   TriageFunc
	MaxRetry int           // attempts per task beyond the first
	Timeout  time.Duration // per task; 0 = asynq's default
	// Admission bounds the running reviews; Admit starts queued ones.
	Admission store.Admission
	// Capacity says what the fleet can take now (worker slots, the
	// provider's wait); nil bounds admission by Admission's ceilings
	// alone, and only reviews ending admit.
	Capacity *Capacity
	// AdmitOnly, when set, restricts admission to one review: the
	// in-process fleet of a single `review` command must not start other
	// reviews whose tasks belong to the fleet's shared queues.
	AdmitOnly string
	// EnqueueParallelism bounds concurrent enqueues in Enqueue (0 or 1: one at a time).
	EnqueueParallelism int
	// Announce, when set, tells idle workers that tasks were enqueued
	// (see WakeChannel); best effort.
	Announce func(ctx context.Context)
	Log      *slog.Logger
	// OnFailed, when set, is called after this pipeline failed a review
	// (for example to store a report saying why).
	OnFailed func(ctx context.Context, reviewID string)
}

// Settings is the configuration a review was submitted with: workers follow
// the snapshot stored with the review, not their own environment, so one
// review behaves the same on every worker.
func Settings(r review.Review) config.Config {
	cfg := config.Default()
	if len(r.Config) == 0 {
		return cfg
	}
	// Defaults fill the fields a snapshot lacks. A snapshot that does not
	// decode (damaged, or written by a version whose field types differ)
	// still yields every field that did: the review goes on with them, and
	// the log says its settings are not all its own.
	if err := json.Unmarshal(r.Config, &cfg); err != nil {
		slog.Warn("decode the review's configuration snapshot: defaults stand in for what did not decode", "review", r.ID, "err", err)
	}
	return cfg
}

// Snapshot returns the part of cfg stored with a review: everything that
// shapes the review, nothing secret.
func Snapshot(cfg config.Config) json.RawMessage {
	cfg.DatabaseURL, cfg.RedisURL, cfg.LLM.APIKey, cfg.LLM.BaseURL = "", "", "", ""
	b, _ := json.Marshal(cfg)
	return b
}

// Chain is the ordered list of stages a review runs, given the stages its
// configuration disabled.
func Chain(skipped []string) []review.Stage {
	var out []review.Stage
	for _, s := range TaskStages {
		if !slices.Contains(skipped, string(s)) {
			out = append(out, s)
		}
	}
	return append(out, review.StageDone)
}

// SkippedStages lists the stages a configuration disables.
func SkippedStages(h config.Harness) []string {
	var out []string
	if !h.VerifyEnabled {
		out = append(out, string(review.StageVerify))
	}
	if !h.EvalEnabled {
		out = append(out, string(review.StageEval))
	}
	return out
}

func next(chain []review.Stage, cur review.Stage) review.Stage {
	i := slices.Index(chain, cur)
	if i < 0 || i+1 >= len(chain) {
		return review.StageDone
	}
	return chain[i+1]
}

func (p *Pipeline) log() *slog.Logger {
	if p.Log == nil {
		return slog.Default()
	}
	return p.Log
}

// AfterItem is called whenever an item of a review closes (or a duplicate
// delivery finds it closed). If the review's current stage has nothing
// pending it moves the review on — exactly one caller wins — plans and
// enqueues the next stage, and keeps going through stages with no work.
func (p *Pipeline) AfterItem(ctx context.Context, reviewID string) error {
	return p.afterItem(ctx, reviewID, nil)
}

// afterItem is AfterItem starting from known, the review as its item's
// handler loaded it (nil: load it). Every write it leads to is conditional
// on the review's stage and status in the database, so a review read
// before the item closed serves as well as a fresh one.
func (p *Pipeline) afterItem(ctx context.Context, reviewID string, known *review.Review) error {
	for {
		var r review.Review
		if known != nil {
			r, known = *known, nil
		} else {
			var err error
			if r, err = p.Store.GetReview(ctx, reviewID); err != nil {
				return err
			}
		}
		if r.Status != review.ReviewRunning || r.Stage == review.StageDone {
			return nil
		}
		out, err := p.Store.StageOutcome(ctx, r.ID, r.Stage)
		if err != nil {
			return err
		}
		if out.Pending > 0 {
			return nil // the stage's last item to close moves the review on
		}
		to := next(Chain(r.SkippedStages), r.Stage)
		if ended, err := p.failIfNothingReviewed(ctx, r, out); err != nil {
			return err
		} else if ended {
			return p.admitNext(ctx)
		}
		won, err := p.Store.Advance(ctx, reviewID, r.Stage, to, p.planner(r, to))
		if err != nil {
			return err
		}
		if won && to == review.StageDone {
			metrics.ReviewsFinished.WithLabelValues(string(review.ReviewDone)).Inc()
			return p.admitNext(ctx)
		}
		if !won {
			return nil
		}
		n, err := p.EnqueuePending(ctx, reviewID, to)
		if err != nil {
			// The ledger rows are committed: the reconciler enqueues them later.
			p.log().Warn("enqueue next stage", "review", reviewID, "stage", to, "err", err)
			return nil
		}
		if n > 0 {
			return nil
		}
	}
}

// EnqueuePending enqueues every pending item of a stage and returns how many
// it found. A task the queue already holds is not enqueued twice.
func (p *Pipeline) EnqueuePending(ctx context.Context, reviewID string, stage review.Stage) (int, error) {
	items, err := p.Store.ListItems(ctx, reviewID, stage)
	if err != nil {
		return 0, err
	}
	var pending []review.Item
	for _, it := range items {
		if it.Status == review.ItemPending {
			pending = append(pending, it)
		}
	}
	return len(pending), p.Enqueue(ctx, pending)
}

// Enqueue hands ledger items to their stage queues with deterministic task
// IDs, up to EnqueueParallelism at once, and records them as enqueued in
// one statement.
func (p *Pipeline) Enqueue(ctx context.Context, items []review.Item) error {
	// Each review's kind picks its queues (interactive or bulk), and its
	// stored trace context the trace its tasks join.
	reviews := map[string]review.Review{}
	for _, it := range items {
		if _, known := reviews[it.ReviewID]; known {
			continue
		}
		r, err := p.Store.GetReview(ctx, it.ReviewID)
		if err != nil {
			return fmt.Errorf("enqueue items of %s: %w", it.ReviewID, err)
		}
		reviews[it.ReviewID] = r
	}
	var (
		mu   sync.Mutex
		errs []error
		done = make([]review.Item, 0, len(items))
		sem  = make(chan struct{}, max(p.EnqueueParallelism, 1))
		wg   sync.WaitGroup
	)
	for _, it := range items {
		r := reviews[it.ReviewID]
		it.Bulk = r.Kind == review.KindBulk
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			err := p.enqueueOne(ctx, r, it)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			done = append(done, it)
		}()
	}
	wg.Wait()
	if len(done) > 0 && p.Announce != nil {
		p.Announce(ctx)
	}
	if err := p.Store.MarkItemsEnqueued(ctx, done); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (p *Pipeline) enqueueOne(ctx context.Context, r review.Review, it review.Item) error {
	opts := []asynq.Option{asynq.MaxRetry(p.MaxRetry)}
	if p.Timeout > 0 {
		opts = append(opts, asynq.Timeout(p.Timeout))
	}
	pl := Payload{ReviewID: it.ReviewID, Stage: it.Stage, Item: it.Key, Gen: it.Generation, Bulk: it.Bulk,
		QueuedAt: time.Now().UnixMicro()}
	ctx, span := startProducer(ctx, r, pl)
	defer span.End()
	task, err := NewTask(ctx, pl, opts...)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		return err
	}
	_, err = p.Queue.EnqueueContext(ctx, task)
	if errors.Is(err, asynq.ErrTaskIDConflict) || errors.Is(err, asynq.ErrDuplicateTask) {
		span.SetAttributes(attribute.Bool("reviewfleet.duplicate", true))
		return nil
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return fmt.Errorf("enqueue %s: %w", GenTaskID(it.ReviewID, it.Stage, it.Key, it.Generation), err)
	}
	return nil
}

// failIfNothingReviewed fails the review when every item of its current
// stage (counted in out) failed: a stage that reviewed nothing leaves
// nothing to report, and a "done" review would tell a CI job the change
// was reviewed. It reports whether the review ended.
func (p *Pipeline) failIfNothingReviewed(ctx context.Context, r review.Review, out store.StageOutcome) (bool, error) {
	total, failed, first := out.Total, out.Failed, out.FirstError
	if total == 0 || failed < total {
		return false, nil
	}
	reason := fmt.Sprintf("no %s item could be reviewed: %d of %d failed (first: %s)", r.Stage, failed, total, first)
	if r.Stage == review.StageReport {
		reason = "the report could not be written: " + first
	}
	won, err := p.Store.FailReview(ctx, r.ID, reason)
	if err != nil {
		return false, err
	}
	if won {
		metrics.ReviewsFinished.WithLabelValues(string(review.ReviewFailed)).Inc()
		p.log().Warn("review failed", "review", r.ID, "reason", reason)
		if p.OnFailed != nil {
			p.OnFailed(ctx, r.ID)
		}
	}
	return true, nil
}
