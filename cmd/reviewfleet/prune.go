package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/store"
)

// cmdPrune deletes old history: stored prompts and replies first, then
// reviews (or, with --keep-verdicts, only their transcripts and reports).
func cmdPrune(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("prune", stderr)
	olderThan := fs.String("older-than", "", "prune reviews created longer ago than this, e.g. 90d or 12h (default retention.older_than, 90d)")
	keep := fs.Bool("keep-verdicts", false, "keep reviews, findings and verdicts; drop only prompts, replies, expert transcripts and reports")
	batchSize := fs.Int("batch-size", 0, "rows per delete statement, each its own transaction (default retention.batch_size, 1000)")
	dryRun := fs.Bool("dry-run", false, "count what would be deleted and change nothing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *olderThan != "" {
		if _, err := config.ParseAge(*olderThan); err != nil {
			return exitError{code: exitUsage, err: fmt.Errorf("--older-than: %w", err)}
		}
	}
	if *batchSize < 0 {
		return exitError{code: exitUsage, err: fmt.Errorf("--batch-size must be positive, got %d", *batchSize)}
	}
	a, closeApp, err := open(ctx, *cfgPath, stderr, app.Options{SkipLLM: true, NoStartLocal: true, Notices: io.Discard}, func(c *config.Config) {
		if *olderThan != "" {
			c.Retention.OlderThan = *olderThan
		}
		if *batchSize > 0 {
			c.Retention.BatchSize = *batchSize
		}
		c.Retention.KeepVerdicts = c.Retention.KeepVerdicts || *keep
	})
	if err != nil {
		return err
	}
	defer closeApp()
	age, err := config.ParseAge(a.Cfg.Retention.OlderThan)
	if err != nil {
		return fmt.Errorf("retention.older_than: %w", err)
	}
	opts := store.PruneOptions{
		Before:       time.Now().Add(-age),
		KeepVerdicts: a.Cfg.Retention.KeepVerdicts,
		BatchSize:    a.Cfg.Retention.BatchSize,
		DryRun:       *dryRun,
		ReplayWindow: a.Cfg.Webhook.ReplayWindow,
	}
	start := time.Now()
	res, err := a.Store.Prune(ctx, opts)
	printPruned(stdout, opts, res, time.Since(start))
	return err
}

func printPruned(w io.Writer, o store.PruneOptions, r store.PruneResult, took time.Duration) {
	verb := "deleted"
	if o.DryRun {
		verb = "would delete"
	}
	fmt.Fprintf(w, "reviews created before %s (finished ones only)%s:\n", o.Before.UTC().Format(time.RFC3339),
		map[bool]string{true: ", keeping verdicts"}[o.KeepVerdicts])
	fmt.Fprintf(w, "  %s %d stored llm calls (prompts and replies)", verb, r.LLMCalls)
	fmt.Fprintf(w, ", %d stored messages no call uses any more\n", r.Messages)
	if o.KeepVerdicts {
		fmt.Fprintf(w, "  %s %d reports; %s the transcripts of %d expert runs\n", verb, r.Reports,
			map[bool]string{true: "would empty", false: "emptied"}[o.DryRun], r.ExpertTranscripts)
	} else {
		fmt.Fprintf(w, "  %s %d reviews with %d findings, %d emptied batches, %d finished webhook deliveries\n", verb, r.Reviews, r.Findings, r.Batches, r.Deliveries)
	}
	if !o.DryRun {
		fmt.Fprintf(w, "  in %s\n", took.Round(time.Millisecond))
	}
}
