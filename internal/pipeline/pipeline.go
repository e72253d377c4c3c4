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

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// Enqueuer hands tasks to the queue; *asynq.Client satisfies it.
type Enqueuer interface {
	EnqueueContext(ctx context.Context, task *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error)
}

// TriageFunc is the manager: it decides which candidate findings go on.
type TriageFunc func(findings []review.Finding, changed map[string][]int, cfg config.Manager) []store.Triage

// Pipeline moves reviews through their stages.
type Pipeline struct {
	Store    *store.Store
	Queue    Enqueuer
	Triage   TriageFunc
	MaxRetry int           // attempts per task beyond the first
	Timeout  time.Duration // per task; 0 = asynq's default
	// EnqueueParallelism bounds concurrent enqueues in Enqueue (0 or 1: one at a time).
	EnqueueParallelism int
	Log                *slog.Logger
}

// Settings is the configuration a review was submitted with: workers follow
// the snapshot stored with the review, not their own environment, so one
// review behaves the same on every worker.
func Settings(r store.Review) config.Config {
	cfg := config.Default()
	if len(r.Config) > 0 {
		_ = json.Unmarshal(r.Config, &cfg) // a snapshot we wrote ourselves; defaults fill gaps
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
	for {
		r, err := p.Store.GetReview(ctx, reviewID)
		if err != nil {
			return err
		}
		if r.Status != store.StatusRunning || r.Stage == review.StageDone {
			return nil
		}
		to := next(Chain(r.SkippedStages), r.Stage)
		if r.Stage == review.StageReport {
			if failed, err := p.reportFailed(ctx, reviewID); err != nil {
				return err
			} else if failed != "" {
				_, err := p.Store.FailReview(ctx, reviewID, "the report could not be written: "+failed)
				return err
			}
		}
		won, err := p.Store.Advance(ctx, reviewID, r.Stage, to, p.planner(r, to))
		if err != nil {
			return err
		}
		if !won || to == review.StageDone {
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
	var pending []store.Item
	for _, it := range items {
		if it.Status == store.ItemPending {
			pending = append(pending, it)
		}
	}
	return len(pending), p.Enqueue(ctx, pending)
}

// Enqueue hands ledger items to their stage queues with deterministic task
// IDs, up to EnqueueParallelism at once, and records them as enqueued in
// one statement.
func (p *Pipeline) Enqueue(ctx context.Context, items []store.Item) error {
	var (
		mu   sync.Mutex
		errs []error
		done = make([]store.Item, 0, len(items))
		sem  = make(chan struct{}, max(p.EnqueueParallelism, 1))
		wg   sync.WaitGroup
	)
	for _, it := range items {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			err := p.enqueueOne(ctx, it)
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
	if err := p.Store.MarkItemsEnqueued(ctx, done); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (p *Pipeline) enqueueOne(ctx context.Context, it store.Item) error {
	opts := []asynq.Option{asynq.MaxRetry(p.MaxRetry)}
	if p.Timeout > 0 {
		opts = append(opts, asynq.Timeout(p.Timeout))
	}
	task, err := NewTask(ctx, Payload{ReviewID: it.ReviewID, Stage: it.Stage, Item: it.Key, Gen: it.Generation}, opts...)
	if err != nil {
		return err
	}
	_, err = p.Queue.EnqueueContext(ctx, task)
	if err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) && !errors.Is(err, asynq.ErrDuplicateTask) {
		return fmt.Errorf("enqueue %s: %w", GenTaskID(it.ReviewID, it.Stage, it.Key, it.Generation), err)
	}
	return nil
}

// reportFailed returns the error of a failed report item ("" when none).
func (p *Pipeline) reportFailed(ctx context.Context, reviewID string) (string, error) {
	items, err := p.Store.ListItems(ctx, reviewID, review.StageReport)
	if err != nil {
		return "", err
	}
	for _, it := range items {
		if it.Status == store.ItemFailed {
			return it.Error, nil
		}
	}
	return "", nil
}
