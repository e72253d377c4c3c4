package main

import (
	"flag"
	"fmt"
	"strings"
)

// commandHelp is what `reviewfleet COMMAND --help` says before its flags:
// how to call the command and what it does. Every command and subcommand
// that takes flags has an entry (TestEveryCommandHasHelp).
var commandHelp = map[string]string{
	"review": `usage: reviewfleet review --repo DIR|URL --base REF --head REF [flags]
       reviewfleet review --diff FILE [--repo DIR] [flags]
       reviewfleet review --pr https://HOST/OWNER/REPO/pull/N [--post]
       reviewfleet review --demo | --replay ID|FILE

Reviews a change and prints its report. With REDIS_URL and DATABASE_URL the fleet's workers review
it (this command needs no model endpoint then); without them the review runs inside this command,
which then needs OPENAI_BASE_URL. --no-wait prints the review ID and returns (a fleet only).
`,
	"status": `usage: reviewfleet status [ID] [-n N] [--batch ID]

With ID: a review's status, change, progress, LLM usage and failed items. Without: the most recent
reviews with their repository, base and head. With --batch: every entry of one batch with its review
(` + "`batch status ID --format json|csv`" + ` writes the same for programs).
`,
	"report": `usage: reviewfleet report ID [--format markdown|json|sarif]

Prints a finished review's report (a failed review's says why it failed).
`,
	"worker": `usage: reviewfleet worker

Serves review tasks from the fleet's queues until stopped. Needs REDIS_URL, DATABASE_URL and the
model endpoint (OPENAI_BASE_URL, OPENAI_API_KEY): workers are the only processes that call the model.
On Ctrl-C or SIGTERM running tasks get worker.shutdown_timeout to finish; a second one stops at once.
`,
	"scheduler": `usage: reviewfleet scheduler [--once]

Runs the fleet's reconciler (requeues lost tasks, admits queued reviews, expires overdue ones) and the
scheduled bulk reviews. Replicas take turns through a lock. Needs REDIS_URL and DATABASE_URL.
`,
	"migrate": `usage: reviewfleet migrate [--down] [--status]

Applies the database migrations to DATABASE_URL (the local Postgres without it).
`,
	"prompts stats": `usage: reviewfleet prompts stats --diff FILE [--diff FILE…]

Prints the sizes of the progressive-context prompts each file of the diffs would get.
`,
	"bulk": `usage: reviewfleet bulk --manifest FILE [flags]
       reviewfleet bulk --github-org ORG [--repo-filter GLOB] [--pull-requests open|closed|all] [flags]
       reviewfleet bulk --manifest FILE --check

Submits one review per manifest entry (or per pull request of an organisation) as a batch and
follows it to its end; --no-wait prints the batch ID once submitted. Re-running the same command
resumes the batch. Submitting needs only DATABASE_URL and REDIS_URL: the workers call the model.
--check resolves every entry's refs and reports each bad entry by line, submitting nothing.

A manifest is JSON Lines: one {"repo", "base", "head"} object per line, with optional "labels"
(string to string), "purpose" and "head_repo". Blank lines and lines starting with # are skipped;
line numbers count every line, so an error names the line an editor shows.
`,
	"batch": `usage: reviewfleet batch SUBCOMMAND [flags]

Subcommands:
  list [-n N]                              recent batches, newest first, with their progress
  status ID [--format table|json|csv]      a batch's progress and every entry: manifest line,
                                           repository, base and head, labels, review, status,
                                           findings by severity, and what a linked entry shares
  report ID [--format markdown|json|csv]   findings and LLM usage per repository, failed entries, cost
  cancel ID                                stop the batch: queued reviews never start, running ones stop
`,
	"recording": recordingUsage,
	"console": `usage: reviewfleet console [--addr HOST:PORT]

Serves the read-only web console: batches, reviews with their findings and verdict trails,
repositories, search, the fleet's workers and queues, and the queue monitor at /queues. Nothing is
served without a sign-in: console.token (REVIEWFLEET_CONSOLE_TOKEN) or a trusted proxy's user header.
`,
	"feedback": `usage: reviewfleet feedback sync [--repo OWNER/REPO]

Subcommands:
  sync [--repo R]   read the reactions, replies, resolved threads and merges on the reviews this
                    fleet posted (every repository, or one), in one bounded pass that resumes
                    where the last one stopped and stops early when GitHub's rate limit runs low
`,
	"feedback sync": `usage: reviewfleet feedback sync [--repo OWNER/REPO]

Reads the reactions, replies, resolved threads and merges on the reviews this fleet posted, into
finding_feedback. Bounded per repository and resumable; needs GITHUB_TOKEN or a GitHub App.
`,
	"quality": `usage: reviewfleet quality [--repo R] [--since 30d] [--format table|json]

Prints how the posted findings ended (resolved, dismissed, acknowledged, open) and the resolution
rate (resolved findings of merged pull requests) per repository and risk type.
`,
	"learnings": `usage: reviewfleet learnings SUBCOMMAND [flags]

Subcommands:
  list [--repo R]                          what dismissals taught, per repository
  show FINGERPRINT [--repo R]              one learning with the feedback behind it
  disable FINGERPRINT --repo R [--note T]  stop applying it (--enable switches it back on)
  export --repo R                          write .reviewfleet.yaml instructions a team can adopt
`,
	"prune": `usage: reviewfleet prune --older-than AGE [--keep-verdicts] [--batch-size N] [--dry-run]

Deletes prompts, replies and reviews older than AGE (e.g. 90d; default retention.older_than). Running
reviews are never deleted.
`,
	"post": `usage: reviewfleet post REVIEW_ID

Posts a finished review of a pull request on it (GITHUB_TOKEN or the GitHub App): one review per head
commit; posting again updates it.
`,
	"serve": `usage: reviewfleet serve

Receives GitHub pull_request webhooks (webhook.secret) and submits their reviews to the fleet. Needs
REDIS_URL and DATABASE_URL; the workers call the model.
`,
	"eval": evalUsage,
	"eval import": `usage: reviewfleet eval import --golden FILE.json --out DIR

Writes an evaluation dataset from benchmark golden comments, fetching each pull request from GitHub.
`,
}

// subcommands lists the subcommands of each command that has some.
var subcommands = map[string][]string{
	"batch":     {"list", "status", "report", "cancel"},
	"local":     {"start", "stop", "psql"},
	"prompts":   {"stats"},
	"config":    {"keys"},
	"eval":      {"import"},
	"recording": {"export"},
	"feedback":  {"sync"},
	"learnings": {"list", "show", "disable", "export"},
}

// setHelp makes fs print the command's help, its flags and then trailer.
func setHelp(fs *flag.FlagSet, name, trailer string) {
	text, ok := commandHelp[name]
	if !ok {
		// A subcommand without a text of its own shares its command's,
		// which lists every subcommand.
		parent, _, sub := strings.Cut(name, " ")
		if text, ok = commandHelp[parent]; !ok || !sub {
			return
		}
	}
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), text)
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), trailer)
	}
}
