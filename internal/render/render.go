// Package render turns a finished review into the documents people and tools
// read: a Markdown report for humans, a JSON document with a stable schema
// (see SCHEMA.md) for storage and scripts, and SARIF 2.1.0 for code-scanning
// integrations. It also decides which findings are reported (Select).
//
// Rendering is pure: the caller gathers everything into a Report first.
package render

import (
	"strconv"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// SchemaVersion is the version of the JSON report schema this package
// writes and reads. It changes only when a change would break a reader.
const SchemaVersion = 1

// Report is everything the report stage knows about one review.
type Report struct {
	// SchemaVersion is written as schema_version; 0 means SchemaVersion.
	SchemaVersion int
	// ToolVersion is the reviewfleet version that produced the report; it
	// becomes the SARIF driver version ("dev" when empty).
	ToolVersion string
	// ReviewID identifies the review.
	ReviewID string
	// Repo names the reviewed repository (a path, URL or owner/name).
	Repo string
	// BaseRef and HeadRef are the refs as the user gave them.
	BaseRef, HeadRef string
	// BaseSHA and HeadSHA are the resolved commits.
	BaseSHA, HeadSHA string
	// Status is the review's final status; Error explains a failure.
	Status, Error string
	// IntentMode is "per_file" or "chunked".
	IntentMode string
	// SkippedStages lists the stages disabled by configuration.
	SkippedStages []string
	// Notes are remarks the reader must see first (for example that the
	// model replies were a recorded exchange).
	Notes []string
	// CreatedAt and FinishedAt bound the review; a zero FinishedAt means the
	// review has not finished.
	CreatedAt, FinishedAt time.Time
	// Threshold is the confidence at or above which findings are reported.
	Threshold float64
	// Findings are the reported findings, as chosen by Select.
	Findings []Finding
	// BelowThreshold are active findings under the threshold, listed briefly
	// with why each is there (Finding.Why).
	BelowThreshold []Finding
	// Dropped are the findings the manager dropped or merged, with Status,
	// DropReason and MergedInto set.
	Dropped []Finding
	// NotReviewed lists changed files the review did not look at.
	NotReviewed []NotReviewed
	// FailedItems lists work items a stage could not complete.
	FailedItems []FailedItem
	// Interrupted is set when the review was stopped (Ctrl-C, a signal)
	// before it finished. For any failed review, interrupted or not,
	// StoppedAt is the stage it was in, NotRun the items that never
	// finished (with the last reason each was given back for) and
	// StagesNotRun the stages never reached.
	Interrupted  bool
	StoppedAt    string
	NotRun       []FailedItem
	StagesNotRun []string
	// EvalSummary counts eval-gate verdicts per risk type.
	EvalSummary map[review.RiskType]EvalCounts
	// Usage is the review's LLM consumption.
	Usage Usage
	// ConfigWarnings lists the repository's .reviewfleet.yaml files that
	// were invalid and ignored (the review used the defaults for them).
	ConfigWarnings []ConfigWarning
	// Resolved are findings of the earlier review this one was built on
	// (review --since) that it no longer raises on the files it
	// re-reviewed; their ResolvedIn is this review.
	Resolved []Finding
	// Calibrated lists the thresholds the repository's outcomes set
	// (harness.calibrate), with why.
	Calibrated []CalibratedThreshold
}

// ConfigWarning is an invalid repository configuration file: its path, the
// line of the mistake (0 when unknown) and what is wrong.
type ConfigWarning struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// InterruptedPrefix starts the error of a review that was stopped before
// it finished (Ctrl-C during an in-process review), as opposed to one that
// failed on its own.
const InterruptedPrefix = "interrupted: "

// StatusFailed is the status of a review that ended without a result.
const StatusFailed = "failed"

// Incomplete reports whether the review finished with items it could not
// review: its findings do not cover the whole change.
func (r *Report) Incomplete() bool {
	return len(r.FailedItems) > 0 && r.Status != StatusFailed
}

// Finding is a finding with what the report shows about it.
type Finding struct {
	review.Finding
	// Code holds the cited new-side lines with a line or two of context, in
	// line order.
	Code []CodeLine
	// CodeNote says what a decoded report's excerpt left out; rendering
	// caps Code itself (MaxExcerptLines) and writes its own note.
	CodeNote string
	// Trail holds the stage verdicts: verify, expert, eval.
	Trail []Verdict
	// Expert describes the expert agent's run, or is nil when none ran.
	Expert *ExpertRun
	// StoppedAt is, in a review that failed, the last stage that judged
	// the finding ("intent" when none did), and MissedStages the judging
	// stages it never went through because the review stopped; empty in a
	// review that finished.
	StoppedAt    string
	MissedStages []string
	// Why is the reason a finding is not reported. Select sets it for the
	// findings below their threshold and DecodeJSON restores it; when it
	// is nil the renderers derive it (WhyBelow, WhyDropped).
	Why *Reason
	// CodeHash identifies the finding's lines as they read in the head
	// version, KindKey its kind (risk type, claim, enclosing symbol); both
	// match it against earlier feedback. Learned is what that feedback did
	// to it (nil: nothing).
	CodeHash, KindKey string
	Learned           *Learned
}

// CodeLine is one new-side source line.
type CodeLine struct {
	Line int
	Text string
}

// Verdict is one stage's judgement of a finding.
type Verdict struct {
	Stage            string
	Verdict          string
	ConfidenceBefore float64
	ConfidenceAfter  float64
	Reason           string
	Evidence         []string
	Model            string
}

// ExpertRun summarises the expert agent's run on a finding.
type ExpertRun struct {
	StopReason string
	Rounds     int
	ToolCalls  int
	Evidence   []string
	// FailedChecks are the required accept-gate checks the submitted
	// verdict failed, with why.
	FailedChecks []FailedCheck
	// Tools counts the run's repository tool calls by tool and outcome
	// (hit, empty, refused, error, timeout); nil when not recorded.
	Tools map[string]map[string]int
}

// FailedCheck is an accept-gate check a verdict failed: its kind, where it
// looked, what it looked for, and why it failed.
type FailedCheck struct {
	Kind               string
	Path               string
	StartLine, EndLine int
	Match              string
	Detail             string
}

// Name names the check by kind and location: "content_contains
// store/users.go:22", "specific_evidence store/users.go:22-24".
func (c FailedCheck) Name() string {
	name := c.Kind
	if c.Path != "" {
		name += " " + c.Path
		if c.StartLine > 0 {
			name += ":" + strconv.Itoa(c.StartLine)
			if c.EndLine > c.StartLine {
				name += "-" + strconv.Itoa(c.EndLine)
			}
		}
	}
	if c.Match != "" {
		name += " " + strconv.Quote(truncate(oneLine(c.Match), 80))
	}
	return name
}

// NotReviewed is a changed file the review skipped, with why (binary,
// ignored, too_large, lock_file, …).
type NotReviewed struct {
	Path   string
	Reason string
}

// FailedItem is a work item a stage gave up on.
type FailedItem struct {
	Stage   string
	ItemKey string
	Error   string
}

// EvalCounts counts eval-gate verdicts.
type EvalCounts struct {
	Confirmed, Disputed, Uncertain int
}

// Usage is LLM consumption.
type Usage struct {
	LLMCalls, TokensIn, TokensOut int
	Cost                          float64 // estimated US dollars from llm.prices; 0 when unpriced
}

// numbers maps finding IDs to their numbers within the review, 1..N: the
// reported findings in report order, then those below the threshold, then
// the dropped ones. Stored IDs are global to the database and mean nothing
// to a reader of one review.
func numbers(r *Report) map[int64]int {
	m := make(map[int64]int, len(r.Findings)+len(r.BelowThreshold)+len(r.Dropped))
	n := 0
	for _, list := range [][]Finding{r.Findings, r.BelowThreshold, r.Dropped} {
		for _, f := range list {
			n++
			if _, ok := m[f.ID]; !ok {
				m[f.ID] = n
			}
		}
	}
	return m
}

// stageOrder ranks the stages a trail may hold so trails always read
// verify → expert → eval; unknown stages go last in their given order.
func stageOrder(stage string) int {
	switch review.Stage(stage) {
	case review.StageVerify:
		return 0
	case review.StageExpert:
		return 1
	case review.StageEval:
		return 2
	}
	return 3
}
