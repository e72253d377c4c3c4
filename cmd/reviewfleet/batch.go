package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/bulk"
	"github.com/reviewfleet/reviewfleet/store"
)

const batchUsage = "usage: reviewfleet batch list | status ID | report ID | cancel ID"

func cmdBatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("batch", stderr)
	limit := fs.Int("n", 20, "how many recent batches `batch list` shows")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 || (pos[0] == "list") != (len(pos) == 1) || len(pos) > 2 {
		return exitError{code: exitUsage, err: errors.New(batchUsage)}
	}
	a, closeApp, err := open(ctx, *cfgPath, stderr, app.Options{SkipLLM: true, Notices: io.Discard}, nil)
	if err != nil {
		return err
	}
	defer closeApp()
	if pos[0] == "list" {
		return batchList(ctx, a.Store, *limit, stdout)
	}
	id := pos[1]
	if _, err := a.Store.GetBatch(ctx, id); errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no batch %s", id)
	} else if err != nil {
		return err
	}
	switch pos[0] {
	case "status":
		return batchStatus(ctx, a.Store, id, stdout)
	case "report":
		return batchReport(ctx, a.Store, id, stdout)
	case "cancel":
		n, err := a.Store.CancelBatch(ctx, id)
		if err != nil {
			return err
		}
		if _, err := a.Pipeline.Admit(ctx); err != nil {
			a.Log.Warn("admit after cancel", "err", err)
		}
		fmt.Fprintf(stdout, "batch %s cancelled: %d reviews stopped (queued ones never start, running ones stop at their next item)\n", id, n)
		return nil
	}
	return exitError{code: exitUsage, err: errors.New(batchUsage)}
}

func batchList(ctx context.Context, st *store.Store, limit int, w io.Writer) error {
	bs, err := st.ListBatches(ctx, limit)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tENTRIES\tDONE\tFAILED\tRUNNING\tQUEUED\tCREATED\tNAME")
	for _, b := range bs {
		p, err := st.GetBatchProgress(ctx, b.ID)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", b.ID, batchState(b, p), b.Entries, p.Done, p.Failed,
			p.Running, p.Queued, b.CreatedAt.UTC().Format(time.RFC3339), b.Name)
	}
	return tw.Flush()
}

// batchState is one word for where a batch stands.
func batchState(b store.Batch, p store.BatchProgress) string {
	switch {
	case b.Status != store.BatchSubmitted:
		return b.Status
	case p.Remaining() > 0:
		return "running"
	}
	return "ended"
}

func batchStatus(ctx context.Context, st *store.Store, id string, w io.Writer) error {
	b, err := st.GetBatch(ctx, id)
	if err != nil {
		return err
	}
	p, err := st.GetBatchProgress(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "batch     %s\nname      %s\nsource    %s\nstatus    %s\n", b.ID, b.Name, b.Source, batchState(b, p))
	if len(b.Labels) > 0 {
		fmt.Fprintf(w, "labels    %v\n", b.Labels)
	}
	fmt.Fprintf(w, "entries   %d (%d submitted, %d linked to identical reviews, %d could not be submitted)\n",
		b.Entries, b.Submitted, b.Duplicates, b.SubmitErrors)
	fmt.Fprintf(w, "reviews   %d: %d done, %d failed, %d running, %d queued\n", p.Reviews, p.Done, p.Failed, p.Running, p.Queued)
	fmt.Fprintf(w, "llm       %d calls, %d tokens in, %d out\n", p.LLMCalls, p.TokensIn, p.TokensOut)
	if eta, ok := bulk.ETA(p, time.Now()); ok {
		fmt.Fprintf(w, "eta       %s\n", eta.Round(time.Second))
	}
	fmt.Fprintf(w, "progress  %s\n", bulk.Line(b, p, time.Now()))
	return nil
}

var severities = []string{"critical", "high", "medium", "low", "info"}

func batchReport(ctx context.Context, st *store.Store, id string, w io.Writer) error {
	b, err := st.GetBatch(ctx, id)
	if err != nil {
		return err
	}
	sums, err := st.BatchRepoSummaries(ctx, id)
	if err != nil {
		return err
	}
	fails, err := st.BatchFailures(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# Batch %s (%s)\n", b.ID, b.Name)
	var calls int
	var tin, tout int64
	for _, s := range sums {
		fmt.Fprintf(w, "\n## %s\n\n", s.Repo)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "REVIEWS\tDONE\tFAILED\tFAILED ITEMS\tCRITICAL\tHIGH\tMEDIUM\tLOW\tINFO\tLLM CALLS\tTOKENS IN\tTOKENS OUT")
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d", s.Reviews, s.Done, s.Failed, s.FailedItems)
		for _, sev := range severities {
			fmt.Fprintf(tw, "\t%d", s.Findings[sev])
		}
		fmt.Fprintf(tw, "\t%d\t%d\t%d\n", s.LLMCalls, s.TokensIn, s.TokensOut)
		if err := tw.Flush(); err != nil {
			return err
		}
		calls, tin, tout = calls+s.LLMCalls, tin+s.TokensIn, tout+s.TokensOut
	}
	if len(fails) > 0 {
		fmt.Fprintf(w, "\n## Failed entries\n\n")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "LINE\tREPO\tCHANGE\tREVIEW\tERROR")
		for _, f := range fails {
			fmt.Fprintf(tw, "%d\t%s\t%s..%s\t%s\t%s\n", f.Line, f.Repo, f.BaseRef, f.HeadRef, f.ReviewID, oneLine(f.Error))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\nCost: %d LLM calls, %d tokens in, %d tokens out (reviews linked from earlier batches cost nothing here)\n", calls, tin, tout)
	return nil
}

func oneLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i] + " …"
		}
	}
	return s
}
