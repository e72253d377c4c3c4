package agent

import (
	"time"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// Task is one finding to investigate and the snapshot to investigate it in.
type Task struct {
	FindingID   int64
	RiskType    review.RiskType
	File        string // repository-relative path the finding cites
	LineStart   int
	LineEnd     int
	Description string
	Confidence  float64 // the finding's confidence before this stage
	// SystemPrompt is the expert prompt for the risk type. The runtime
	// appends its own protocol rules (tools, evidence, completion) to it.
	SystemPrompt string
	// Context is extra material for the model, such as the diff excerpt
	// around the finding.
	Context string
	// Root is the directory holding the head snapshot of the repository.
	// The tools see nothing outside it.
	Root string
	// ChangedFilesOnly reports a snapshot that holds only the files the
	// change touched (the repository was not available): empty searches
	// and missing files say so, so the model does not conclude that a
	// file it cannot see does not exist.
	ChangedFilesOnly bool
}

// StopReason says why a run ended.
type StopReason string

// Stop reasons. The values are stored in Postgres and must not change.
const (
	StopAccepted          StopReason = "accepted"                  // confirmed or refuted verdict submitted, every required check passed
	StopInconclusive      StopReason = "inconclusive"              // inconclusive verdict submitted, every required check passed
	StopAcceptCheckFailed StopReason = "accept_check_failed"       // verdict submitted, a required check failed
	StopRepeatCycle       StopReason = "repeat_cycle"              // the same call kept returning the same result
	StopMissingCompletion StopReason = "missing_completion_signal" // replies kept arriving without a tool call
	StopBudgetExhausted   StopReason = "budget_exhausted"          // no verdict by the end of the graceful exit
	StopTimeout           StopReason = "timeout"                   // the caller's deadline passed
	StopError             StopReason = "error"                     // the model or the setup failed
)

// Check is one evidence item of a verdict: a fact the runtime can verify
// without the model.
type Check struct {
	// Kind is CheckFileExists, CheckContentContains or CheckToolFact.
	Kind string `json:"kind"`
	// Path is the repository-relative file of file_exists and
	// content_contains checks.
	Path string `json:"path,omitempty"`
	// StartLine and EndLine bound a content_contains check (1-based,
	// inclusive); zero means the whole file.
	StartLine int `json:"start_line,omitempty"`
	EndLine   int `json:"end_line,omitempty"`
	// Match is the text that must appear (whitespace-normalised).
	Match string `json:"match,omitempty"`
	// Required checks decide the accept gate; optional ones are reported
	// only.
	Required bool `json:"required"`
}

// Evidence check kinds.
const (
	CheckFileExists      = "file_exists"      // Path is a regular file in the snapshot
	CheckContentContains = "content_contains" // Match appears in Path within [StartLine, EndLine]
	CheckToolFact        = "tool_fact"        // Match appears in a result a tool returned during the run
)

// CheckResult is the outcome of one evidence check.
type CheckResult struct {
	Check
	Passed bool   `json:"passed"`
	Detail string `json:"detail"`
}

// Phase is a stage of the exploration.
type Phase string

// Exploration phases, in order.
const (
	PhaseExplore   Phase = "explore"   // gather context around the finding
	PhaseVerify    Phase = "verify"    // confirm or refute the specific claim
	PhaseSummarize Phase = "summarize" // stop exploring and submit the verdict
)

// PhaseChange records one phase transition.
type PhaseChange struct {
	From   Phase  `json:"from"`
	To     Phase  `json:"to"`
	Round  int    `json:"round"`
	Reason string `json:"reason"`
}

// Result is the outcome of one run.
type Result struct {
	// Verdict is review.VerdictConfirmed, VerdictRefuted or
	// VerdictInconclusive.
	Verdict    string
	Confidence float64
	Reasoning  string
	// Evidence is the evidence submitted with the verdict, CheckResults the
	// outcome of checking each item.
	Evidence     []Check
	CheckResults []CheckResult
	StopReason   StopReason
	// Rounds is the number of model calls made.
	Rounds int
	// ToolCalls counts the calls the model made, by tool name. Never nil.
	ToolCalls map[string]int
	// Calls records each repository tool call with its outcome, in order
	// (submit_verdict excluded).
	Calls []ToolCall
	// Phases are the exploration phase changes, in order. Never nil.
	Phases    []PhaseChange
	TokensIn  int
	TokensOut int
	Duration  time.Duration
	// Error describes the failure of a run that stopped with StopError.
	Error string
	// Err is the failure behind Error, for errors.Is and errors.As: the
	// model's error (wrapped), the context's error, the setup problem, or
	// for Judge the reason the document is not a valid verdict. It is nil
	// unless StopReason is StopError, and is not stored.
	Err error `json:"-"`
}
