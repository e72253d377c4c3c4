// Command reviewfleet reviews pull requests with LLMs: submit a review and
// watch it, run workers and the scheduler of a fleet, apply migrations, and
// read statuses and reports back.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/reviewfleet/reviewfleet/stages/report"
)

// exitError carries a process exit code with its message.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }

// Unwrap lets errors.Is see the cause, such as flag.ErrHelp.
func (e exitError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal asks the command to stop gracefully; the next one
	// ends the process at once (a worker would otherwise let its running
	// tasks finish for up to worker.shutdown_timeout).
	go func() { <-ctx.Done(); stop() }()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		code := 1
		var ee exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "reviewfleet:", err)
		}
		os.Exit(code)
	}
}

var errUsage = errors.New("usage")

// reportVersion sets the version reports carry once: commands run side by
// side in one process (in tests) would otherwise write it concurrently.
var reportVersion sync.Once

const usage = `reviewfleet — a fleet of workers that reviews changes with LLMs

Usage:
  reviewfleet review   --repo DIR --base REF --head REF [--format markdown|json|sarif] [--no-wait]
  reviewfleet review   --diff FILE [--repo DIR] [--format …]
  reviewfleet review   --pr https://HOST/OWNER/REPO/pull/N [--post]   review a GitHub pull request (GITHUB_TOKEN)
  reviewfleet post     REVIEW_ID              post a review on its pull request (one review per head; re-posting updates it)
  reviewfleet serve                           receive GitHub pull_request webhooks and submit their reviews (webhook:)
  reviewfleet console  [--addr HOST:PORT]     read-only web console: batches, reviews, findings, fleet (console:)
  reviewfleet review   --demo                 review a bundled sample offline (recorded LLM exchange)
  reviewfleet review   --replay ID|FILE       re-run a recorded review offline (no model is called)
  reviewfleet recording export ID > FILE     write a review's recording for --replay
  reviewfleet status   [ID] [--batch ID]      a review's status and progress (no ID: recent reviews; --batch: a batch's)
  reviewfleet report   ID [--format markdown|json|sarif]
  reviewfleet bulk     --manifest FILE | --github-org ORG [--repo-filter GLOB] [--max-running N] [--no-wait]
  reviewfleet bulk     --manifest FILE --check  resolve every entry's refs and report bad lines, submitting nothing
  reviewfleet batch    list | status ID [--format table|json|csv] | report ID [--format markdown|json|csv] | cancel ID
  reviewfleet worker                          serve review tasks (needs REDIS_URL, DATABASE_URL, OPENAI_BASE_URL)
  reviewfleet scheduler [--once]              run the reconciler, admission and scheduled bulk reviews
  reviewfleet migrate  [--down] [--status]    apply the database migrations
  reviewfleet eval     --dataset DIR [--judge-model M] [--compare RUN_ID] [--toggles LIST] [--format markdown|json]
  reviewfleet eval import --golden FILE.json --out DIR   dataset from benchmark golden comments (GitHub)
  reviewfleet prune    --older-than 90d [--keep-verdicts] [--batch-size N] [--dry-run]
                                              delete old prompts, replies and reviews (running ones never)
  reviewfleet feedback sync [--repo R]        read reactions, replies and merges on posted reviews now
  reviewfleet quality  [--repo R] [--since 30d] [--format table|json]   resolution rate of posted findings
  reviewfleet learnings list|show FP|disable FP|export [--repo R]      what dismissals taught, per repository
  reviewfleet prompts stats --diff FILE…      progressive-context prompt sizes per file
  reviewfleet config keys                     every configuration key and its environment variable
  reviewfleet local    start | stop | psql [--url]
                                              the local Postgres reviews use without DATABASE_URL: start or
                                              stop it, open it with psql (--url: print its connection URL)
  reviewfleet version                         print the version (also --version)

Every command takes --config FILE (YAML); 'reviewfleet COMMAND --help' describes each. Environment:
DATABASE_URL, REDIS_URL, OPENAI_BASE_URL, OPENAI_API_KEY, and REVIEWFLEET_<SECTION>_<KEY> for any key
(see 'reviewfleet config keys'). Submitting to a fleet (review, bulk, serve) needs only DATABASE_URL
and REDIS_URL: the workers hold the model's endpoint and key.
`

// commands is the command table: each command's name and its function.
func commands() map[string]func(context.Context, []string, io.Writer, io.Writer) error {
	return map[string]func(context.Context, []string, io.Writer, io.Writer) error{
		"review": cmdReview, "status": cmdStatus, "report": cmdReport, "worker": cmdWorker,
		"scheduler": cmdScheduler, "migrate": cmdMigrate, "prompts": cmdPrompts, "config": cmdConfig,
		"local": cmdLocal, "bulk": cmdBulk, "batch": cmdBatch,
		"recording": cmdRecording,
		"prune":     cmdPrune,
		"post":      cmdPost, "serve": cmdServe,
		"eval":     cmdEval,
		"feedback": cmdFeedback, "quality": cmdQuality, "learnings": cmdLearnings,
		"console": cmdConsole,
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	if args[0] == "--version" || args[0] == "-version" || args[0] == "version" {
		return printVersion(stdout)
	}
	reportVersion.Do(func() { report.Version = versionString() })
	cmd, ok := commands()[args[0]]
	if !ok {
		fmt.Fprint(stderr, usage)
		return exitError{code: exitUsage, err: fmt.Errorf("unknown command %q", args[0])}
	}
	err := cmd(ctx, args[1:], stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil // the flag set printed the command's usage: asking for it is not an error
	}
	return err
}
