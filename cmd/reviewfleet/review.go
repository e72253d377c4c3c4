package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/store"
)

// Exit codes of `reviewfleet review`, for CI jobs that gate on it. When
// several apply, the highest wins.
const (
	exitOK         = 0 // the review is done, every item reviewed, nothing at or above --fail-on
	exitFindings   = 1 // a reported finding is at or above the --fail-on severity
	exitUsage      = 2 // bad flags or arguments
	exitIncomplete = 3 // the review is done but some items could not be reviewed
	exitFailed     = 4 // the review failed (nothing of a stage reviewed, deadline) or could not run
)

const reviewExitCodes = `
Exit codes:
  0  done: every item reviewed, no reported finding at or above --fail-on
  1  a reported finding is at or above the --fail-on severity
  2  usage error (bad flags or arguments)
  3  incomplete: the review is done but some items could not be reviewed (reasons first in the report)
  4  failed: the review ended without a result (e.g. every call refused by the provider), or could not run
`

func cmdReview(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	defer func() {
		// Anything that stopped the review from running is a failure for CI.
		var ee exitError
		if err != nil && !errors.As(err, &ee) {
			err = exitError{code: exitFailed, err: err}
		}
	}()
	fs, cfgPath := newFlags("review", stderr)
	setHelp(fs, "review", reviewExitCodes)
	repo := fs.String("repo", "", "local repository directory or remote git URL")
	base := fs.String("base", "", "base revision")
	head := fs.String("head", "", "head revision")
	diffFile := fs.String("diff", "", "unified diff file to review (file contents are read from --repo)")
	purpose := fs.String("purpose", "", "what the change is for, e.g. the pull request's title and description (default: the commit messages)")
	format := fs.String("format", "markdown", "output format: markdown, json or sarif")
	noWait := fs.Bool("no-wait", false, "print the review ID and return (needs a fleet: REDIS_URL and workers)")
	useDemo := fs.Bool("demo", false, "review a bundled sample repository with a recorded LLM exchange, offline")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	since := fs.String("since", "", "review incrementally against an earlier finished review: files unchanged since it keep its findings")
	replayFrom := fs.String("replay", "", "re-run a recorded review offline, no model called: `ID|FILE`, a review ID in the database or a recording file (see 'recording export'); --repo DIR names the recorded head tree's checkout here")
	prURL := fs.String("pr", "", "GitHub pull request to review: https://HOST/OWNER/REPO/pull/N (token: GITHUB_TOKEN)")
	post := fs.Bool("post", false, "with --pr: post the review on the pull request when it ends (updates an earlier one)")
	failOn := fs.String("fail-on", "", "exit 1 when a reported finding has this severity or worse: critical, high, medium, low or info (default: never)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkFormat(*format); err != nil {
		return err
	}
	var gate review.Severity
	if *failOn != "" {
		if gate, err = review.ParseSeverity(*failOn); err != nil {
			return exitError{code: exitUsage, err: fmt.Errorf("--fail-on: %w", err)}
		}
	}

	var edit func(*config.Config)
	// Typed by the operator: --repo may name a directory on this host.
	req := submit.Request{Repo: *repo, Base: *base, Head: *head, DiffFile: *diffFile, Purpose: *purpose, Since: *since, Origin: submit.FromOperator}
	if *replayFrom != "" && (*useDemo || *base != "" || *head != "" || *diffFile != "" || *prURL != "") {
		return exitError{code: exitUsage, err: errors.New("--replay takes its change from the recording: give no --demo, --pr, --base, --head or --diff (--repo DIR names where the recorded head tree is on this host)")}
	}
	if err := checkPRFlags(*prURL, *post, *noWait, *useDemo, req); err != nil {
		return exitError{code: exitUsage, err: err}
	}
	if !*useDemo && *replayFrom == "" && *prURL == "" {
		// Arguments first: a missing --base must not hide behind notices
		// about the LLM endpoint or the database.
		if err := submit.CheckRequest(req); err != nil {
			return exitError{code: exitUsage, err: err}
		}
	}
	var rp *replayRun
	if *replayFrom != "" {
		if rp, err = startReplay(*replayFrom); err != nil {
			return err
		}
		defer rp.Close()
		if *repo != "" {
			if rp.snapshot, err = filepath.Abs(*repo); err != nil {
				return exitError{code: exitUsage, err: fmt.Errorf("--repo: %w", err)}
			}
		}
		edit = rp.edit
		fmt.Fprintln(stderr, "REPLAY: the LLM replies are played back from the recording of", *replayFrom, "— no model is called; the review runs in this command.")
	}
	if *useDemo {
		dir, err := os.MkdirTemp("", "reviewfleet-demo-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		sample, err := demo.WriteRepo(ctx, dir)
		if err != nil {
			return fmt.Errorf("write the demo repository: %w", err)
		}
		if rp, edit, err = demoRun(sample); err != nil {
			return err
		}
		defer rp.Close()
		fmt.Fprintln(stderr, "DEMO: reviewing a bundled sample repository; the LLM replies are a RECORDED exchange played back offline — no model is called.")
	}

	// The demo prepares its database itself; a real review expects `migrate`.
	// Submitting to a fleet needs no model endpoint: its workers call the
	// model. A review run in this command (no REDIS_URL) needs one.
	appOpts := app.Options{Migrate: *useDemo, ForFleet: rp == nil}
	if rp != nil {
		appOpts.InProcessReason = "the recorded replies are served from this process"
	}
	if *noWait {
		appOpts.Check = func(cfg config.Config) error {
			if cfg.RedisURL == "" || cfg.DatabaseURL == "" {
				return exitError{code: exitUsage, err: errors.New("--no-wait needs a fleet: set REDIS_URL and DATABASE_URL and run `reviewfleet worker` (without them the review runs inside this command)")}
			}
			return nil
		}
	}
	a, closeApp, err := open(ctx, *cfgPath, stderr, appOpts, edit)
	if err != nil {
		return err
	}
	defer closeApp()

	run := app.ReviewRequest{Change: req}
	switch {
	case rp != nil:
		run.Submit = func(ctx context.Context, sub *app.Submission) (string, error) { return rp.submit(ctx, a.Store, sub) }
	case *prURL != "":
		run.Submit = func(ctx context.Context, sub *app.Submission) (string, error) {
			return submitPR(ctx, a, sub, *prURL, *since, stderr)
		}
	}
	opts := app.RunOptions{NoWait: *noWait, Progress: stderr}
	if *quiet {
		opts.Progress = nil
	}
	if rp != nil {
		// A request the recording has no reply for ends the review with
		// that error rather than leaving the item to fail and retry.
		opts.Abort = rp.misses()
	}
	out, err := a.RunReview(ctx, run, opts)
	if out.Interrupted && printReport(context.WithoutCancel(ctx), a.Store, out.ID, *format, stdout) == nil {
		return exitError{code: exitFailed, err: fmt.Errorf("review %s interrupted: it is partial, and the report above lists what did not run", out.ID)}
	}
	if err != nil {
		return err
	}
	id, r := out.ID, out.Review
	if *noWait {
		fmt.Fprintln(stdout, id)
		return nil
	}
	if err := printReport(ctx, a.Store, id, *format, stdout); err != nil {
		return err
	}
	if *post {
		if err := postReview(ctx, a, id, stderr); err != nil {
			return err
		}
	}
	return outcome(ctx, a.Store, r, gate)
}

// outcome turns a finished review into the command's exit code.
func outcome(ctx context.Context, st *store.Store, r review.Review, gate review.Severity) error {
	switch {
	case r.Status == review.ReviewFailed:
		return exitError{code: exitFailed, err: fmt.Errorf("review %s failed: %s", r.ID, r.Error)}
	case r.Incomplete:
		return exitError{code: exitIncomplete, err: fmt.Errorf("review %s is incomplete: %d items could not be reviewed (see the report)", r.ID, r.FailedItems)}
	case gate == "":
		return nil
	}
	stored, err := st.GetReport(ctx, r.ID)
	if err != nil {
		return err
	}
	rep, err := render.DecodeJSON(stored.JSON)
	if err != nil {
		return err
	}
	n := 0
	for _, f := range rep.Findings {
		if f.Severity.Rank() <= gate.Rank() {
			n++
		}
	}
	if n > 0 {
		return exitError{code: exitFindings, err: fmt.Errorf("review %s: %d reported findings at or above %s", r.ID, n, gate)}
	}
	return nil
}

func printReport(ctx context.Context, st *store.Store, id, format string, w io.Writer) error {
	rep, err := st.GetReport(ctx, id)
	if err != nil {
		return err
	}
	switch format {
	case "json":
		_, err = fmt.Fprintln(w, string(indentJSON(rep.JSON)))
	case "sarif":
		_, err = fmt.Fprintln(w, string(indentJSON(rep.SARIF)))
	default:
		_, err = fmt.Fprint(w, rep.Markdown)
	}
	return err
}
