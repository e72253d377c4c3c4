// Package progress follows a review while it runs: per-stage items done
// out of total, the eval gate's tally, and elapsed time, written to a
// terminal as one updating line (or as a new line whenever it changes).
package progress

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/heartbeat"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// PollInterval is how often Wait reads the review's state.
var PollInterval = 200 * time.Millisecond

// Line renders a review's progress on one line, e.g.
// "intent 3/3 · verify 4/5 · expert 0/0 · eval – · report –".
func Line(ctx context.Context, st *store.Store, r review.Review) (string, error) {
	prog, err := st.Progress(ctx, r.ID)
	if err != nil {
		return "", err
	}
	byStage := map[review.Stage]store.StageProgress{}
	for _, p := range prog {
		byStage[p.Stage] = p
	}
	var parts []string
	chain := pipeline.Chain(r.SkippedStages)
	for _, s := range pipeline.TaskStages {
		inChain := false
		for _, c := range chain {
			inChain = inChain || c == s
		}
		if !inChain {
			parts = append(parts, fmt.Sprintf("%s skipped", s))
			continue
		}
		p, ok := byStage[s]
		switch {
		case !ok && reached(chain, r.Stage, s):
			parts = append(parts, fmt.Sprintf("%s 0/0", s))
		case !ok:
			parts = append(parts, fmt.Sprintf("%s –", s))
		default:
			part := fmt.Sprintf("%s %d/%d", s, p.Done+p.Failed, p.Total)
			if p.Failed > 0 {
				part += fmt.Sprintf(" (%d failed)", p.Failed)
			}
			parts = append(parts, part)
		}
	}
	line := strings.Join(parts, " · ")
	if r.Status == review.ReviewQueued {
		// Waiting for a place in the fleet: say where in the queue.
		if pos, total, err := st.QueuePosition(ctx, r.ID); err == nil && pos > 0 {
			line = fmt.Sprintf("queued %d of %d · ", pos, total) + line
		}
	}
	if sum, err := st.EvalSummary(ctx, r.ID); err == nil && len(sum) > 0 {
		keys := make([]string, 0, len(sum))
		for k := range sum {
			keys = append(keys, string(k))
		}
		sort.Strings(keys)
		var ev []string
		for _, k := range keys {
			c := sum[review.RiskType(k)]
			ev = append(ev, fmt.Sprintf("%s %d✓ %d✗ %d?", k, c.Confirmed, c.Disputed, c.Uncertain))
		}
		line += "  [eval: " + strings.Join(ev, ", ") + "]"
	}
	return line, nil
}

// reached reports whether the review's current stage is at or past s.
func reached(chain []review.Stage, cur, s review.Stage) bool {
	ci, si := -1, -1
	for i, c := range chain {
		if c == cur {
			ci = i
		}
		if c == s {
			si = i
		}
	}
	return ci >= si && si >= 0
}

// Option adds to what Wait tells while it waits.
type Option func(*waitOptions)

type waitOptions struct {
	servers heartbeat.Servers
	waits   FleetWaits
}

// WithFleet makes Wait say when no live worker serves the review's queue
// (servers is the queue's server list; nil: not checked).
func WithFleet(servers heartbeat.Servers) Option {
	return func(o *waitOptions) { o.servers = servers }
}

// StallCheckInterval is how often Wait looks for why a review is not
// moving: no worker, or items given back by an outage.
var StallCheckInterval = 2 * time.Second

// Stalled says why a running review may not be moving, or "": no live
// worker serving the queue of its current stage (when servers is not
// nil), or the last outage an unfinished item of it was given back for.
func Stalled(ctx context.Context, st *store.Store, servers heartbeat.Servers, r review.Review) string {
	if r.Status != review.ReviewRunning {
		return ""
	}
	if servers != nil {
		if msg := heartbeat.NoWorker(servers, pipeline.QueueFor(r.Stage, r.Kind == review.KindBulk)); msg != "" {
			return msg
		}
	}
	items, err := st.UnfinishedItems(ctx, r.ID)
	if err != nil {
		return ""
	}
	for _, it := range items {
		if it.Stage == r.Stage && it.Status == review.ItemPending && it.Error != "" {
			return fmt.Sprintf("waiting: %s %s was given back (%s)", it.Stage, it.Key, clip(it.Error, 160))
		}
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// Wait polls the review until it is done or failed, writing progress to w.
// If the review is still running well past its deadline (no scheduler is
// running to fail it), Wait fails it itself.
func Wait(ctx context.Context, st *store.Store, id string, w io.Writer, timeout time.Duration, opts ...Option) (review.Review, error) {
	var o waitOptions
	for _, opt := range opts {
		opt(&o)
	}
	var stall string
	var stallChecked time.Time
	start := time.Now()
	out := NewPrinter(w)
	t := time.NewTicker(PollInterval)
	defer t.Stop()
	for {
		r, err := st.GetReview(ctx, id)
		if err != nil {
			return r, err
		}
		line, err := Line(ctx, st, r)
		if err != nil {
			return r, err
		}
		elapsed := time.Since(start)
		if time.Since(stallChecked) >= StallCheckInterval {
			stall, stallChecked = Stalled(ctx, st, o.servers, r), time.Now()
		}
		if stall != "" {
			line += "  ⚠ " + stall
		} else if r.Status == review.ReviewRunning {
			if note := o.waits.Note(ctx); note != "" {
				line += "  ⏸ " + note
			}
		}
		out.Update(elapsed, line)
		if r.Status == review.ReviewDone || r.Status == review.ReviewFailed {
			out.End()
			status := string(r.Status)
			if r.Incomplete {
				status = fmt.Sprintf("%s, INCOMPLETE (items not reviewed: %d)", status, r.FailedItems)
			}
			fmt.Fprintf(w, "review %s %s in %s\n", r.ID, status, Duration(elapsed))
			return r, nil
		}
		if time.Now().After(r.DeadlineAt.Add(time.Minute)) && timeout > 0 {
			if _, err := st.FailReview(ctx, id, fmt.Sprintf("review did not finish within %s (stage %s)", timeout, r.Stage)); err != nil {
				return r, err
			}
			continue
		}
		select {
		case <-ctx.Done():
			out.End()
			return r, fmt.Errorf("stopped waiting for review %s (it goes on if workers are running; `reviewfleet status %s`): %w", id, id, ctx.Err())
		case <-t.C:
		}
	}
}
