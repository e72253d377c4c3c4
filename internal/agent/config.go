package agent

import (
	"context"
	"encoding/json"
	"time"
)

// Config tunes one expert run. The zero value of every field means "use the
// default" given in the field's comment.
type Config struct {
	// Model is the model name sent with every request. No default: an empty
	// name is sent as is, for clients that fill it in themselves.
	Model string
	// MaxRounds is the number of model calls before the runtime forces the
	// summarize phase. Default 22.
	MaxRounds int
	// SearchBudget is the number of grep, find_symbol and list_dir calls the
	// model may make; further calls are refused with a tool error. Default 12.
	SearchBudget int
	// GracefulExitRounds is the number of forced summarize rounds after
	// MaxRounds before the run stops with StopBudgetExhausted. Default 2.
	GracefulExitRounds int
	// ConvergenceRounds is the number of rounds without new information that
	// triggers a convergence nudge (and drives the default phase
	// transitions). Default 3.
	ConvergenceRounds int
	// BudgetWarningAt is the fraction of MaxRounds after which the model is
	// warned that its budget is running out. Default 0.7.
	BudgetWarningAt float64
	// ReflectionEvery is the period, in rounds, of the reflection nudge.
	// Default 6.
	ReflectionEvery int
	// RepeatThreshold is how many rounds in a row of the same calls with
	// the same results (A/A/A) bring a reminder; loops of 2 or 3 rounds
	// (A/B/A/B, A/B/C/A/B/C) need two full turns. One more round of the loop
	// after the reminder stops the run with StopRepeatCycle. Default 3.
	RepeatThreshold int
	// MaxMissingCompletion is how many replies in a row without a tool call
	// stop the run with StopMissingCompletion. Default 3.
	MaxMissingCompletion int
	// ReadTimeout is the first time budget of read_file and list_dir calls.
	// Default 5s.
	ReadTimeout time.Duration
	// ScanTimeout is the first time budget of grep and find_symbol calls.
	// Default 15s.
	ScanTimeout time.Duration
	// MaxToolTimeout caps the budget of a call signature whose earlier calls
	// timed out (each timeout doubles it). Default 60s.
	MaxToolTimeout time.Duration
	// MaxReadLines is the most lines one read_file call returns. Default 400.
	MaxReadLines int
	// MaxResultBytes is the most bytes of one tool result sent to the model;
	// longer results are cut and end with a truncation marker. Default 16 KiB.
	MaxResultBytes int
	// MaxFileBytes is the largest file the tools read or search; larger files
	// are refused. Default 2 MiB.
	MaxFileBytes int64
	// AcceptFailFactor multiplies the confidence of a verdict that failed the
	// accept gate, and the finding's confidence when the run ends without a
	// verdict. Default 0.5.
	AcceptFailFactor float64
	// QuoteWindow is how many lines from the finding's cited lines a
	// confirming quote may sit and still count as evidence about them.
	// Default 20.
	QuoteWindow int
	// MaxToolCallsPerRound is how many tool calls of one reply are run; the
	// rest are answered with a tool error the model can read. Default 8.
	MaxToolCallsPerRound int
	// IsRetryable reports model errors that Run returns to its caller (for
	// example rate limits, so the task is retried later) instead of ending
	// the run with StopError. Default: no error is retryable.
	IsRetryable func(error) bool
	// Ignore reports repository-relative, slash-separated paths that the
	// review ignores; grep and find_symbol skip them. Default: none.
	Ignore func(path string) bool
	// Deny holds globs (diff.Glob syntax) of repository paths the tools
	// never read, list or search; a refused read answers "denied by sandbox
	// policy". .git is always denied. Default DefaultDeny.
	Deny []string
	// Transitions are the exploration phase transition rules, tried in order
	// at the end of every round. Default DefaultTransitions().
	Transitions []Transition
	// SummarySchema, when set, is a JSON schema (an object, OpenAI strict
	// mode) that the forced summarize rounds ask the reply to follow, through
	// response_format {type: json_schema, json_schema: {name:
	// SummarySchemaName, strict: true, schema: SummarySchema}}. It should
	// describe the submit_verdict arguments, since the reply is read as a
	// verdict written as text. Default: none, the rounds ask in words only.
	SummarySchema json.RawMessage
	// SummarySchemaName names SummarySchema in the request (letters, digits,
	// '_' and '-', at most 64). Default DefaultSummarySchemaName.
	SummarySchemaName string

	// toolHook, when set, runs before every repository tool with the call's
	// context and time budget; tests use it to simulate slow tools.
	toolHook func(ctx context.Context, tool string, budget time.Duration) error
}

// Defaults of Config, exported so callers can document and display them.
const (
	DefaultMaxRounds            = 22
	DefaultSearchBudget         = 12
	DefaultGracefulExitRounds   = 2
	DefaultConvergenceRounds    = 3
	DefaultBudgetWarningAt      = 0.7
	DefaultReflectionEvery      = 6
	DefaultRepeatThreshold      = 3
	DefaultMaxMissingCompletion = 3
	DefaultReadTimeout          = 5 * time.Second
	DefaultScanTimeout          = 15 * time.Second
	DefaultMaxToolTimeout       = 60 * time.Second
	DefaultMaxReadLines         = 400
	DefaultMaxResultBytes       = 16 << 10
	DefaultMaxFileBytes         = 2 << 20
	DefaultAcceptFailFactor     = 0.5
	DefaultSummarySchemaName    = "expert_verdict"
	DefaultQuoteWindow          = 20
	DefaultMaxToolCallsPerRound = 8
)

// withDefaults returns c with every unset or out-of-range field replaced by
// its default.
func (c Config) withDefaults() Config {
	setInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	setInt(&c.MaxRounds, DefaultMaxRounds)
	setInt(&c.SearchBudget, DefaultSearchBudget)
	setInt(&c.GracefulExitRounds, DefaultGracefulExitRounds)
	setInt(&c.ConvergenceRounds, DefaultConvergenceRounds)
	setInt(&c.ReflectionEvery, DefaultReflectionEvery)
	setInt(&c.RepeatThreshold, DefaultRepeatThreshold)
	setInt(&c.MaxMissingCompletion, DefaultMaxMissingCompletion)
	setInt(&c.MaxReadLines, DefaultMaxReadLines)
	setInt(&c.QuoteWindow, DefaultQuoteWindow)
	setInt(&c.MaxToolCallsPerRound, DefaultMaxToolCallsPerRound)
	setInt(&c.MaxResultBytes, DefaultMaxResultBytes)
	setDur(&c.ReadTimeout, DefaultReadTimeout)
	setDur(&c.ScanTimeout, DefaultScanTimeout)
	setDur(&c.MaxToolTimeout, DefaultMaxToolTimeout)
	if c.BudgetWarningAt <= 0 || c.BudgetWarningAt > 1 {
		c.BudgetWarningAt = DefaultBudgetWarningAt
	}
	if c.MaxFileBytes <= 0 {
		c.MaxFileBytes = DefaultMaxFileBytes
	}
	if c.AcceptFailFactor <= 0 || c.AcceptFailFactor > 1 {
		c.AcceptFailFactor = DefaultAcceptFailFactor
	}
	if c.SummarySchemaName == "" {
		c.SummarySchemaName = DefaultSummarySchemaName
	}
	if c.Transitions == nil {
		c.Transitions = DefaultTransitions()
	}
	return c
}
