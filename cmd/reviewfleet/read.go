package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/heartbeat"
	"github.com/reviewfleet/reviewfleet/internal/progress"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/stages/report"
	"github.com/reviewfleet/reviewfleet/store"
)

func indentJSON(b []byte) []byte {
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return b
	}
	return out.Bytes()
}

func cmdStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("status", stderr)
	limit := fs.Int("n", 20, "how many recent reviews to list when no ID is given")
	batchID := fs.String("batch", "", "list the reviews of this batch, one per entry (`batch status ID --format json|csv` for programs)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if *batchID != "" && len(pos) > 0 {
		return exitError{code: exitUsage, err: errors.New("give a review ID or --batch ID, not both")}
	}
	a, closeApp, err := open(ctx, *cfgPath, stderr, app.Options{SkipLLM: true, Notices: io.Discard, NoStartLocal: true}, nil)
	if err != nil {
		return err
	}
	defer closeApp()
	if *batchID != "" {
		if _, err := a.Store.GetBatch(ctx, *batchID); errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no batch %s", *batchID)
		} else if err != nil {
			return err
		}
		return batchStatus(ctx, a.Store, *batchID, "table", stdout)
	}
	if len(pos) == 0 {
		reviews, err := a.Store.ListReviews(ctx, *limit)
		if err != nil {
			return err
		}
		t := &table{header: []string{"ID", "STATUS", "STAGE", "REPO", "BASE", "HEAD", "CREATED"}}
		for _, r := range reviews {
			status := string(r.Status)
			if r.Incomplete {
				status += " (incomplete)"
			}
			base, head := refLabel(r.BaseRef, r.BaseSHA), refLabel(r.HeadRef, r.HeadSHA)
			t.add(r.ID, status, string(r.Stage), r.Repo, base, head, r.CreatedAt.UTC().Format(time.RFC3339))
		}
		return t.writeText(stdout)
	}
	r, err := a.Store.GetReview(ctx, pos[0])
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no review %s", pos[0])
	}
	if err != nil {
		return err
	}
	line, err := progress.Line(ctx, a.Store, r)
	if err != nil {
		return err
	}
	change := firstNonEmpty(r.BaseRef, r.BaseSHA) + ".." + firstNonEmpty(r.HeadRef, r.HeadSHA)
	if r.BaseRef == "" && r.BaseSHA == "" && r.HeadRef != "" {
		change = "diff " + r.HeadRef // a --diff review has no base
	}
	fmt.Fprintf(stdout, "review  %s\nrepo    %s\nchange  %s\nstatus  %s\nstage   %s\nmode    %s\n",
		r.ID, r.Repo, change, r.Status, r.Stage, r.IntentMode)
	if len(r.SkippedStages) > 0 {
		fmt.Fprintf(stdout, "skipped %v\n", r.SkippedStages)
	}
	if r.Status == review.ReviewQueued {
		if pos, total, err := a.Store.QueuePosition(ctx, r.ID); err == nil && pos > 0 {
			fmt.Fprintf(stdout, "queue   position %d of %d queued (waiting for room in the fleet)\n", pos, total)
		}
	}
	fmt.Fprintf(stdout, "progress %s\nllm     %d calls, %d tokens in, %d out\n", line, r.LLMCalls, r.TokensIn, r.TokensOut)
	if r.Cost > 0 {
		fmt.Fprintf(stdout, "cost    $%.4f estimated (llm.prices)\n", r.Cost)
	}
	if r.SkippedBudget > 0 {
		fmt.Fprintf(stdout, "budget  %d items skipped: LLM budget spent (raise llm.max_calls_per_review / llm.max_tokens_per_review)\n", r.SkippedBudget)
	}
	if note := report.SnapshotNote(r); note != "" {
		fmt.Fprintf(stdout, "snapshot changed files only: %s\n", note)
	}
	if r.Error != "" {
		fmt.Fprintf(stdout, "error   %s\n", r.Error)
	}
	if err := printExpertTools(ctx, a.Store, r.ID, stdout); err != nil {
		return err
	}
	var servers heartbeat.Servers
	if !a.LocalRedis && a.Inspector != nil {
		servers = a.Inspector
	}
	if stall := progress.Stalled(ctx, a.Store, servers, r); stall != "" {
		fmt.Fprintf(stdout, "stalled %s\n", stall)
	}
	return printFailedItems(ctx, a.Store, r, stdout)
}

// printFailedItems says whether a review is incomplete and lists its
// failed items with their reasons.
func printFailedItems(ctx context.Context, st *store.Store, r review.Review, stdout io.Writer) error {
	failed, err := st.FailedItems(ctx, r.ID)
	if err != nil || len(failed) == 0 {
		return err
	}
	if r.Incomplete {
		fmt.Fprintf(stdout, "INCOMPLETE: items not reviewed: %d\n", len(failed))
	} else {
		fmt.Fprintf(stdout, "failed items: %d\n", len(failed))
	}
	for _, it := range failed {
		fmt.Fprintf(stdout, "  %s %s: %s\n", it.Stage, it.Key, it.Error)
	}
	return nil
}

// refLabel names a side of a change: its ref, else its commit, shortened.
func refLabel(ref, sha string) string {
	if ref != "" {
		return ref
	}
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func cmdReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("report", stderr)
	format := fs.String("format", "markdown", "output format: markdown, json or sarif")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return exitError{code: exitUsage, err: errors.New("usage: reviewfleet report ID [--format markdown|json|sarif]")}
	}
	if err := checkFormat(*format); err != nil {
		return err
	}
	a, closeApp, err := open(ctx, *cfgPath, stderr, app.Options{SkipLLM: true, Notices: io.Discard, NoStartLocal: true}, nil)
	if err != nil {
		return err
	}
	defer closeApp()
	id := pos[0]
	r, err := a.Store.GetReview(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no review %s", id)
	}
	if err != nil {
		return err
	}
	if _, err := a.Store.GetReport(ctx, id); errors.Is(err, store.ErrNotFound) {
		if r.Status != review.ReviewFailed && r.Status != review.ReviewDone {
			return fmt.Errorf("review %s is still %s (stage %s): its report is not written yet", id, r.Status, r.Stage)
		}
		// Failed reviews, and finished ones whose report `prune
		// --keep-verdicts` removed, are rendered from the findings.
		a.StoreFailureReport(ctx, id)
	}
	return printReport(ctx, a.Store, id, *format, stdout)
}
