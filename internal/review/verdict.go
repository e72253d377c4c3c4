package review

import (
	"encoding/json"
	"time"
)

// Verdict is one stage's judgement of one finding.
type Verdict struct {
	ReviewID         string
	FindingID        int64
	Stage            Stage
	Verdict          string
	ConfidenceBefore float64
	ConfidenceAfter  float64
	Reason           string
	Evidence         json.RawMessage // JSON array
	Model            string
	TokensIn         int
	TokensOut        int
	Latency          time.Duration
	CreatedAt        time.Time
}

// ExpertRun is the record of one expert agent run.
type ExpertRun struct {
	FindingID  int64
	StopReason string
	Rounds     int
	ToolCalls  json.RawMessage // {"read_file": 3, …}
	Phases     json.RawMessage // [{"from":"explore","to":"verify","round":4,"reason":"…"}]
	Checks     json.RawMessage // accept-gate results
	TokensIn   int
	TokensOut  int
	Duration   time.Duration
	Error      string
	// ToolOutcomes counts the run's tool calls by tool and outcome:
	// {"grep": {"hit": 3, "empty": 1}, …}.
	ToolOutcomes json.RawMessage
	// Calls are the run's repository tool calls, in order; stored with the
	// run, not loaded with it (the store lists them apart).
	Calls []ExpertToolCall
}

// ExpertToolCall is one repository tool call of an expert run and what it
// gave the model.
type ExpertToolCall struct {
	FindingID   int64
	Round, Seq  int
	Tool        string
	Args        string // redacted and bounded by the runtime
	Outcome     string // hit, empty, refused, error, timeout
	ResultBytes int
	Latency     time.Duration
}

// Triage is the manager's decision about one finding.
type Triage struct {
	FindingID  int64
	Status     FindingStatus
	Reason     string
	MergedInto int64
	Score      float64
	// LineStart and LineEnd, when set, replace the finding's range (the
	// manager puts swapped ranges in order).
	LineStart, LineEnd int
}
