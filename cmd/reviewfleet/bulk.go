package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/bulk"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/untrusted"
)

// labelFlags collects repeated --label key=value flags.
type labelFlags map[string]string

func (l labelFlags) String() string { return fmt.Sprint(map[string]string(l)) }

func (l labelFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want key=value, got %q", v)
	}
	l[strings.TrimSpace(k)] = val
	return nil
}

const bulkExitCodes = `
Exit codes:
  0  every review of the batch is done (--no-wait: the batch is submitted; --check: every entry resolves)
  1  a review failed or an entry could not be submitted (see 'batch report ID'), --check found a bad
     entry, or the command could not run (database, Redis, GitHub)
  2  usage error: bad flags, a malformed manifest, or a configuration bulk cannot run with
`

func cmdBulk(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("bulk", stderr)
	setHelp(fs, "bulk", bulkExitCodes)
	manifest := fs.String("manifest", "", "JSON Lines file: one {\"repo\", \"base\", \"head\", \"labels\", \"purpose\"} per line")
	org := fs.String("github-org", "", "review every open pull request of this GitHub organisation (token: GITHUB_TOKEN)")
	prState := fs.String("pull-requests", "open", "with --github-org: the pull requests to review: open, closed or all")
	filter := fs.String("repo-filter", "", "with --github-org: only repositories whose owner/name matches this glob")
	batchID := fs.String("batch-id", "", "batch ID (default: derived from the source and its entries, so re-running resumes)")
	name := fs.String("name", "", "batch name (default: the source)")
	maxRunning := fs.Int("max-running", 0, "running reviews of this batch at most; 0: no cap (default bulk.max_running_per_batch)")
	noWait := fs.Bool("no-wait", false, "print the batch ID once submitted and return (needs a fleet: REDIS_URL and workers)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	check := fs.Bool("check", false, "resolve every entry's repository, base and head as a submission would, report each bad entry by line, and submit nothing (exit 1 when one is bad)")
	labels := labelFlags{}
	fs.Var(labels, "label", "key=value label of the batch (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if (*manifest == "") == (*org == "") {
		return exitError{code: exitUsage, err: errors.New("usage: reviewfleet bulk --manifest FILE | --github-org ORG [--repo-filter GLOB] [--no-wait]")}
	}
	if *filter != "" && *org == "" {
		return exitError{code: exitUsage, err: errors.New("--repo-filter applies to --github-org only")}
	}
	if *prState != "open" && *prState != "closed" && *prState != "all" {
		return exitError{code: exitUsage, err: fmt.Errorf("--pull-requests %q: want open, closed or all", *prState)}
	}
	if *maxRunning < 0 {
		return exitError{code: exitUsage, err: errors.New("--max-running must not be negative")}
	}
	if *check {
		return bulkCheck(ctx, *cfgPath, *manifest, *org, *filter, *prState, stdout, stderr)
	}
	// Submitting to a fleet needs no model endpoint: its workers call the
	// model. A batch run in this command (no REDIS_URL) needs one.
	a, closeApp, err := open(ctx, *cfgPath, stderr, app.Options{ForFleet: true, Check: bulkFleetCheck(*noWait)}, nil)
	if err != nil {
		return err
	}
	defer closeApp()
	spec, err := bulkSpec(ctx, a, *manifest, *org, *filter, *prState)
	if err != nil {
		return err
	}
	spec.ID, spec.MaxRunning, spec.Labels = *batchID, *maxRunning, labels
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "max-running" })
	if *maxRunning == 0 && given {
		spec.MaxRunning = bulk.NoCap // asked for in so many words: the configured cap does not apply
	}
	if *name != "" {
		spec.Name = *name
	}
	if spec.ID == "" {
		spec.ID = bulk.DeriveID(spec.Source, spec.Entries)
	}

	opts := app.RunOptions{NoWait: *noWait, Progress: stderr}
	if *quiet {
		opts.Progress = nil
	}
	out, err := a.RunReview(ctx, app.ReviewRequest{Batch: &spec}, opts)
	if err != nil {
		return err
	}
	res, p := out.Batch, out.BatchProgress
	fmt.Fprintln(stdout, res.Batch.ID)
	if *noWait {
		return nil
	}
	if p.Failed > 0 || res.Errors > 0 {
		return exitError{code: 1, err: fmt.Errorf("batch %s: %d reviews failed, %d entries could not be submitted (`reviewfleet batch report %s`)",
			res.Batch.ID, p.Failed, res.Errors, res.Batch.ID)}
	}
	return nil
}

// bulkCheck resolves every entry of a manifest (or an organisation's
// listing) as a submission would and reports the bad ones by line. It
// submits nothing.
func bulkCheck(ctx context.Context, cfgPath, manifest, org, filter, prState string, stdout, stderr io.Writer) error {
	a, closeApp, err := open(ctx, cfgPath, stderr, app.Options{SkipLLM: true, Notices: io.Discard}, nil)
	if err != nil {
		return err
	}
	defer closeApp()
	var spec bulk.Spec
	var problems []bulk.Problem
	if manifest != "" {
		// Malformed lines are reported with the entries that do not
		// resolve: one run lists everything to correct.
		f, err := os.Open(manifest)
		if err != nil {
			return fmt.Errorf("open manifest: %w", err)
		}
		var bad []bulk.LineError
		spec.Entries, bad, err = bulk.ParseManifestLines(f)
		f.Close()
		if err != nil {
			return err
		}
		for _, l := range bad {
			problems = append(problems, bulk.Problem{Line: l.Line, Err: "malformed: " + l.Msg})
		}
	} else if spec, err = bulkSpec(ctx, a, manifest, org, filter, prState); err != nil {
		return err
	}
	unresolved, err := bulk.Check(ctx, a, spec.Entries, a.Cfg.Bulk.SubmitConcurrency)
	if err != nil {
		return err
	}
	problems = append(problems, unresolved...)
	slices.SortFunc(problems, func(x, y bulk.Problem) int { return x.Line - y.Line })
	total := len(spec.Entries) + len(problems) - len(unresolved)
	for _, p := range problems {
		if p.Repo == "" {
			fmt.Fprintf(stdout, "line %d: %s\n", p.Line, untrusted.OneLine(p.Err))
			continue
		}
		fmt.Fprintf(stdout, "line %d: %s %s..%s: %s\n", p.Line, untrusted.OneLine(p.Repo), untrusted.OneLine(p.Base),
			untrusted.OneLine(p.Head), untrusted.OneLine(p.Err))
	}
	if len(problems) > 0 {
		return exitError{code: 1, err: fmt.Errorf("%d of %d entries cannot be reviewed (listed above); nothing was submitted",
			len(problems), total)}
	}
	if total == 0 {
		return exitError{code: exitUsage, err: errors.New("the manifest has no entries")}
	}
	fmt.Fprintf(stdout, "all %d entries resolve; nothing was submitted (run again without --check to submit them)\n", total)
	return nil
}

// bulkFleetCheck refuses, before anything starts, a configuration bulk
// cannot run with.
func bulkFleetCheck(noWait bool) func(config.Config) error {
	return func(cfg config.Config) error {
		if noWait && (cfg.RedisURL == "" || cfg.DatabaseURL == "") {
			return exitError{code: exitUsage, err: errors.New("--no-wait needs a fleet: set REDIS_URL and DATABASE_URL and run `reviewfleet worker`")}
		}
		if cfg.RedisURL == "" && cfg.DatabaseURL != "" {
			// The in-process fleet would adopt the shared database's
			// pending work and admit other users' queued reviews onto a
			// queue that vanishes when this command exits.
			return exitError{code: exitUsage, err: errors.New("bulk with DATABASE_URL but no REDIS_URL would run a private fleet on a shared database: set REDIS_URL to the fleet's Redis (and run `reviewfleet worker`), or unset DATABASE_URL to use the local database")}
		}
		return nil
	}
}

// bulkSpec reads the entries of a manifest or lists an organisation's
// pull requests.
func bulkSpec(ctx context.Context, a *app.App, manifest, org, filter, prState string) (bulk.Spec, error) {
	if manifest != "" {
		f, err := os.Open(manifest)
		if err != nil {
			return bulk.Spec{}, fmt.Errorf("open manifest: %w", err)
		}
		defer f.Close()
		entries, err := bulk.ParseManifest(f)
		if err != nil {
			return bulk.Spec{}, exitError{code: exitUsage, err: fmt.Errorf("%s: %w", manifest, err)}
		}
		return bulk.Spec{Name: manifest, Source: "manifest:" + manifest, Entries: entries}, nil
	}
	entries, err := bulk.ListOrgPullRequests(ctx, org, bulk.GitHubOptions{
		APIURL: a.Cfg.GitHub.APIURL, Token: getenv(ctx, "GITHUB_TOKEN"), RepoFilter: filter, PullRequests: prState,
	})
	if err != nil {
		return bulk.Spec{}, err
	}
	if len(entries) == 0 {
		return bulk.Spec{}, fmt.Errorf("github org %s has no open pull request in a repository matching %q", org, filter)
	}
	src := "github:" + org
	if filter != "" {
		src += ":" + filter
	}
	if prState != "open" {
		src += ":" + prState // a different listing: a different batch
	}
	return bulk.Spec{Name: src, Source: src, Entries: entries}, nil
}
