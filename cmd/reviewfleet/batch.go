package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/store"
)

func cmdBatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("batch", stderr)
	limit := fs.Int("n", 20, "how many recent batches `batch list` shows")
	format := fs.String("format", "", "output format: table, json or csv for `status` (default table); markdown, json or csv for `report` (default markdown)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 || (pos[0] == "list") != (len(pos) == 1) || len(pos) > 2 {
		fs.Usage()
		return exitError{code: exitUsage, err: errors.New("want: batch list | status ID | report ID | cancel ID")}
	}
	switch pos[0] {
	case "status":
		*format = cmp.Or(*format, "table")
		err = checkTableFormat(*format, "table", "json", "csv")
	case "report":
		*format = cmp.Or(*format, "markdown")
		if *format == "md" {
			*format = "markdown"
		}
		err = checkTableFormat(*format, "markdown", "json", "csv")
	case "list", "cancel":
		if *format != "" {
			err = exitError{code: exitUsage, err: fmt.Errorf("batch %s takes no --format", pos[0])}
		}
	default:
		err = exitError{code: exitUsage, err: fmt.Errorf("unknown batch subcommand %q: want list, status, report or cancel", pos[0])}
	}
	if err != nil {
		return err
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
		return batchStatus(ctx, a.Store, id, *format, stdout)
	case "report":
		return batchReport(ctx, a.Store, id, *format, stdout)
	}
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

func oneLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i] + " …"
		}
	}
	return s
}
