// Command fakellm is an OpenAI-compatible chat completions server for drills:
// point a fleet at it to review without a provider, with findings where the
// code says so, and with the misbehaviours of real providers (rate limits,
// spent quota, bad keys, server errors, garbage, cut replies, slowness) at
// chosen shares. It records every request it gets when asked.
//
//	fakellm -addr 127.0.0.1:8089 -reviewer markers -misbehave 429=0.1,500=0.05 -record calls.jsonl
//	fakellm -reviewer golden -dataset testdata/eval/polyglot
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "fakellm:", err)
		os.Exit(2)
	}
}

// options are the command's flags.
type options struct {
	addr      string
	latency   time.Duration
	slow      time.Duration
	reviewer  string
	dataset   string
	marker    string
	verdict   string
	misbehave map[string]float64
	always    string
	record    string
	seed      uint64
	rpm       int
	every     time.Duration
}

// parseFlags reads the command line.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	var shares string
	fs := flag.NewFlagSet("fakellm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8089", "`host:port` to listen on (port 0 picks a free one)")
	fs.DurationVar(&o.latency, "latency", 0, "delay added to every reply")
	fs.DurationVar(&o.slow, "slow", 30*time.Second, "delay of the slow misbehaviour")
	fs.StringVar(&o.reviewer, "reviewer", "schema", "how replies are made: schema (a minimal valid reply from the request's JSON schema), markers (findings at added lines containing -marker) or golden (the golden issues of -dataset, established through the expert's tools, plus decoys)")
	fs.StringVar(&o.dataset, "dataset", "", "the eval dataset `DIR` whose golden issues the golden reviewer knows")
	fs.StringVar(&o.marker, "marker", llmfake.DefaultMarker, "the text the markers reviewer looks for")
	fs.StringVar(&o.verdict, "expert-verdict", "confirmed", "the verdict the markers reviewer's expert submits (confirmed, refuted, inconclusive, …)")
	fs.StringVar(&shares, "misbehave", "", "`KIND=SHARE,…`: share of requests that misbehave, kinds: "+strings.Join(llmfake.Misbehaviours, ", "))
	fs.StringVar(&o.always, "always", "", "`KIND`: every request misbehaves this way")
	fs.StringVar(&o.record, "record", "", "append every request, as a JSON line, to `FILE`")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the random choice of misbehaviours")
	fs.IntVar(&o.rpm, "rpm", 0, "enforce a quota of `N` requests in any sliding minute, answering 429 with Retry-After beyond it and stating the quota in x-ratelimit-*-requests headers on every reply (0: none)")
	fs.DurationVar(&o.every, "report-every", 0, "print the calls in flight at once (mean, peak) every `DURATION` (0: only at exit)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch o.reviewer {
	case "schema", "markers":
		if o.dataset != "" {
			return o, fmt.Errorf("-dataset is for -reviewer golden, not %s", o.reviewer)
		}
	case "golden":
		if o.dataset == "" {
			return o, errors.New("-reviewer golden needs -dataset DIR")
		}
	default:
		return o, fmt.Errorf("-reviewer %q: want schema, markers or golden", o.reviewer)
	}
	if o.always != "" {
		if _, err := llmfake.ParseShares(o.always + "=1"); err != nil {
			return o, fmt.Errorf("-always: %w", err)
		}
	}
	if o.rpm < 0 {
		return o, errors.New("-rpm must not be negative")
	}
	if o.latency < 0 || o.slow < 0 || o.every < 0 {
		return o, errors.New("-latency, -slow and -report-every must not be negative")
	}
	var err error
	if o.misbehave, err = llmfake.ParseShares(shares); err != nil {
		return o, fmt.Errorf("-misbehave: %w", err)
	}
	return o, nil
}

// run serves until ctx is done.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	var golden *llmfake.GoldenReviewer
	if o.reviewer == "golden" {
		if golden, err = llmfake.NewGoldenReviewer(ctx, o.dataset); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "fakellm: golden reviewer knows %d issues and proposes %d decoys (dataset %s)\n", golden.Issues(), golden.Decoys(), o.dataset)
		defer func() { fmt.Fprintf(stdout, "fakellm: expert tool results: %s\n", outcomeText(golden.ToolOutcomes())) }()
	}
	h, closeRecord, err := handler(o, golden)
	if err != nil {
		return err
	}
	defer closeRecord()
	if o.rpm > 0 {
		var stats *llmfake.QuotaStats
		h, stats = llmfake.Quota(o.rpm, time.Minute, h)
		defer func() {
			ok, denied := stats.Counts()
			fmt.Fprintf(stdout, "fakellm: quota %d rpm: %d calls accepted, %d answered 429\n", o.rpm, ok, denied)
		}()
	}
	srv, err := llmfake.StartAt(o.addr, h)
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(stdout, "fakellm: serving %s (reviewer %s); set OPENAI_BASE_URL=%s\n", srv.URL, o.reviewer, srv.URL)
	defer func() {
		fmt.Fprintf(stdout, "fakellm: calls at once overall: %s\n", concurrencyText(srv.Concurrency()))
	}()
	if o.every <= 0 {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(o.every)
	defer t.Stop()
	prev := srv.Concurrency()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			cur := srv.Concurrency()
			if d := cur.Since(prev); d.Busy > 0 {
				fmt.Fprintf(stdout, "fakellm: calls at once, last %s: %s\n", o.every, concurrencyText(d))
			}
			prev = cur
		}
	}
}

// concurrencyText says how many calls were in flight at once, e.g.
// "mean 15.8 while busy (12.1s), peak 16, 16 or more 91% of the time".
func concurrencyText(c llmfake.Concurrency) string {
	if c.Busy <= 0 {
		return "no calls"
	}
	return fmt.Sprintf("mean %.1f while busy (%s), peak %d, %d or more %.0f%% of the time",
		c.Mean(), c.Busy.Round(100*time.Millisecond), c.Peak, c.Peak, 100*c.ShareAtLeast(c.Peak))
}

// outcomeText lists tool outcome counts as "grep hit 12, grep empty 0, …",
// sorted by tool and outcome.
func outcomeText(m map[string]map[string]int) string {
	var parts []string
	for _, tool := range slices.Sorted(maps.Keys(m)) {
		for _, outcome := range slices.Sorted(maps.Keys(m[tool])) {
			parts = append(parts, fmt.Sprintf("%s %s %d", tool, outcome, m[tool][outcome]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
