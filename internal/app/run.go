package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/reviewfleet/reviewfleet/internal/bulk"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/progress"
	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/store"
)

// ReviewRequest is what RunReview runs: one change (Change, or Submit for
// a change that needs more than preparing), or a batch of them.
type ReviewRequest struct {
	// Change is the change to review, unless Submit or Batch is set.
	Change submit.Request
	// Submit, when set, submits the review in place of Change: a pull
	// request, whose review records it, or a recorded review played back.
	// It must submit through sub, which admits the review alone when this
	// process is its fleet.
	Submit func(ctx context.Context, sub *Submission) (string, error)
	// Batch, when set, submits one review per entry and follows the batch.
	Batch *bulk.Spec
}

// RunOptions tunes one RunReview.
type RunOptions struct {
	// Harness, when set, replaces the configured harness settings for the
	// reviews of this run only.
	Harness *config.Harness
	// Progress receives progress lines while the run waits (nil: none).
	Progress io.Writer
	// NoWait returns once the review (or the batch) is submitted: a fleet
	// runs it.
	NoWait bool
	// Abort, when it delivers an error, ends the wait for a single review
	// with that error (a replay's request the recording has no reply for).
	Abort <-chan error
}

// Outcome is how a RunReview ended.
type Outcome struct {
	// ID is the review's (or the batch's) ID; empty when nothing was
	// submitted.
	ID string
	// Review is the review as it ended (zero with NoWait, or when the wait
	// gave up).
	Review review.Review
	// Interrupted says ctx ended the wait (Ctrl-C or a signal) while this
	// process was the review's only fleet, and the review was recorded as
	// interrupted, with a partial report that lists what did not run.
	Interrupted bool
	// Batch says what submitting a batch did; BatchProgress is its state
	// at its end.
	Batch         bulk.Result
	BatchProgress store.BatchProgress
}

// RunReview runs a review the way every command does: it submits it; when
// this process is the fleet (an in-process Redis) it runs a worker and a
// reconciler scoped to the review until the review ends; it waits, with
// progress, up to the configured review timeout. A failed review gets its
// failure report. When the wait ends early (ctx ends, the timeout passes,
// or opts.Abort fires) on an in-process fleet, nothing else will ever run
// the review, so it is recorded as failed — as interrupted when ctx ended
// it — and the error says why the wait ended.
//
// With req.Batch it submits the batch's reviews with the in-process fleet
// (if any) serving every review, and follows the batch to its end.
func (a *App) RunReview(ctx context.Context, req ReviewRequest, opts RunOptions) (Outcome, error) {
	if req.Batch != nil {
		return a.runBatch(ctx, *req.Batch, opts)
	}
	cfg := a.Cfg
	if opts.Harness != nil {
		cfg.Harness = *opts.Harness
	}
	p, id := a.Pipeline, ""
	if a.LocalRedis {
		// This process is the review's only fleet: admit this review
		// alone, never put another review's tasks on an in-process queue.
		id = uuid.NewString()
		scoped := *a.Pipeline
		scoped.AdmitOnly = id
		p = &scoped
	}
	sub := a.submission(cfg, p, id)
	var err error
	if req.Submit != nil {
		id, err = req.Submit(ctx, sub)
	} else if err = submit.CheckRequest(req.Change); err == nil {
		id, err = sub.Submit(ctx, req.Change)
	}
	if err != nil {
		return Outcome{}, err
	}
	if opts.NoWait {
		return Outcome{ID: id}, nil
	}
	return a.wait(ctx, id, p, opts)
}

// wait follows review id to its end (see RunReview), running the
// in-process fleet, driving reviews through p, meanwhile.
func (a *App) wait(ctx context.Context, id string, p *pipeline.Pipeline, opts RunOptions) (Outcome, error) {
	out := Outcome{ID: id}
	waitCtx, stopWaiting := context.WithCancelCause(ctx)
	defer stopWaiting(nil)
	if opts.Abort != nil {
		go func() {
			select {
			case err := <-opts.Abort:
				stopWaiting(err)
			case <-waitCtx.Done():
			}
		}()
	}
	stopFleet, err := a.startLocalFleet(ctx, id, p, stopWaiting)
	if err != nil {
		return out, err
	}
	defer stopFleet()

	progOut := opts.Progress
	if progOut == nil {
		progOut = io.Discard
	}
	r, err := progress.Wait(waitCtx, a.Store, id, progOut, a.Cfg.Scheduler.ReviewTimeout, a.fleetCheck(),
		progress.WithProviderWait(a.ProviderWait), progress.WithQuotaBacklog(a.quotaBacklog))
	if err != nil {
		if cause := context.Cause(waitCtx); cause != nil && !errors.Is(cause, context.Canceled) {
			err = cause
		}
		if a.LocalRedis {
			reason := "stopped: the command running its in-process worker ended (" + err.Error() + ")"
			interrupted := ctx.Err() != nil // Ctrl-C or a signal, not a failure of the review
			if interrupted {
				reason = render.InterruptedPrefix + "the command running its in-process worker was stopped (Ctrl-C or a signal)"
			}
			out.Interrupted = a.abandonLocalReview(ctx, id, reason, stopFleet) && interrupted
		}
		return out, err
	}
	if r.Status == review.ReviewFailed {
		a.StoreFailureReport(ctx, id)
	}
	out.Review = r
	return out, nil
}

// runBatch submits a batch and follows it (see RunReview).
func (a *App) runBatch(ctx context.Context, spec bulk.Spec, opts RunOptions) (Outcome, error) {
	progOut := opts.Progress
	if progOut == nil {
		progOut = io.Discard
	}
	// Without REDIS_URL this process is the fleet: a worker and the
	// reconciler run here until the batch ends.
	stop, err := a.startLocalFleet(ctx, "", a.Pipeline, nil)
	if err != nil {
		return Outcome{}, err
	}
	defer stop()
	fmt.Fprintf(progOut, "batch %s: submitting %d entries from %s\n", spec.ID, len(spec.Entries), spec.Source)
	sub := &bulk.Submitter{Store: a.Store, Reviews: a, Concurrency: a.Cfg.Bulk.SubmitConcurrency}
	var entriesDone atomic.Int64
	step := max(int64(len(spec.Entries))/10, 1)
	sub.OnEntry = func(store.BatchEntry) {
		if n := entriesDone.Add(1); n%step == 0 {
			fmt.Fprintf(progOut, "batch %s: %d/%d entries submitted\n", spec.ID, n, len(spec.Entries))
		}
	}
	res, err := sub.Submit(ctx, spec)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{ID: res.Batch.ID, Batch: res}
	// The batch's own counts, in the words `batch status` uses: what this
	// run added and what an earlier run had submitted sum to them.
	counts, err := a.Store.BatchEntryCounts(ctx, res.Batch.ID)
	if err != nil {
		return out, err
	}
	line := fmt.Sprintf("batch %s: %d entries: %s", res.Batch.ID, counts.Entries, bulk.EntrySummary(counts))
	if res.Resumed > 0 {
		line += fmt.Sprintf(" (%d of them submitted by an earlier run)", res.Resumed)
	}
	fmt.Fprintln(progOut, line)
	if opts.NoWait {
		return out, nil
	}
	if out.BatchProgress, err = bulk.Wait(ctx, a.Store, res.Batch.ID, progOut,
		progress.FleetWaits{Provider: a.ProviderWait, QuotaBacklog: a.quotaBacklog}); err != nil {
		return out, err
	}
	return out, nil
}

// Report reads the report stored for review id.
func (a *App) Report(ctx context.Context, id string) (*render.Report, error) {
	stored, err := a.Store.GetReport(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("report of review %s: %w", id, err)
	}
	rep, err := render.DecodeJSON(stored.JSON)
	if err != nil {
		return nil, fmt.Errorf("report of review %s: %w", id, err)
	}
	return rep, nil
}

// fleetCheck makes a wait say when no worker serves the review: only a
// fleet of separate workers can be missing (an in-process one is here).
func (a *App) fleetCheck() progress.Option {
	if a.LocalRedis || a.Inspector == nil {
		return progress.WithFleet(nil)
	}
	return progress.WithFleet(a.Inspector)
}
