package agent

import (
	"strings"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/redact"
)

// ToolOutcome classifies what one repository tool call gave the model, so
// that a tool which stopped working shows as such instead of looking like a
// quiet codebase. The values are stored in Postgres and used as metric
// labels: they must not change.
type ToolOutcome string

// Tool outcomes.
const (
	// OutcomeHit: the call returned repository content (lines, entries,
	// matches).
	OutcomeHit ToolOutcome = "hit"
	// OutcomeEmpty: the call ran and found nothing (no matching line, no
	// definition, an empty directory or file).
	OutcomeEmpty ToolOutcome = "empty"
	// OutcomeRefused: the runtime declined to run the call by policy (a
	// denied or escaping path, a symlink, an oversized file, the search
	// budget, the closed tools of the forced rounds, the per-reply cap).
	OutcomeRefused ToolOutcome = "refused"
	// OutcomeError: the call failed (bad arguments, a missing file, an
	// unknown tool, an unexpected failure).
	OutcomeError ToolOutcome = "error"
	// OutcomeTimeout: the call ran out of its time budget.
	OutcomeTimeout ToolOutcome = "timeout"
)

// ToolOutcomes lists every outcome, in the order reports show them.
var ToolOutcomes = []ToolOutcome{OutcomeHit, OutcomeEmpty, OutcomeRefused, OutcomeError, OutcomeTimeout}

// MaxToolArgs bounds the arguments kept with a tool call record, in bytes.
const MaxToolArgs = 240

// ToolCall records one repository tool call of a run (submit_verdict is not
// one: it is the run's verdict, recorded as such).
type ToolCall struct {
	// Round is the model call whose reply asked for the tool (1-based);
	// Seq numbers the run's tool calls in order (1-based).
	Round, Seq int
	// Tool is the tool's name as the model gave it (unknown names are
	// kept, bounded, and classified OutcomeError).
	Tool string
	// Args are the call's canonical arguments, redacted and cut to
	// MaxToolArgs bytes.
	Args    string
	Outcome ToolOutcome
	// ResultBytes is the size of the result before it was cut to
	// Config.MaxResultBytes (0 for a call that failed).
	ResultBytes int
	Latency     time.Duration
}

// maxToolName bounds a recorded tool name: the model may invent any.
const maxToolName = 64

// recordArgs is the stored form of a call's raw arguments.
func recordArgs(raw string) string {
	a := storable(redact.String(canonicalArgs(raw)))
	if len(a) > MaxToolArgs {
		a = cutUTF8(a, MaxToolArgs-len("…")) + "…"
	}
	return a
}

// recordTool is the stored form of a tool name as the model gave it.
func recordTool(name string) string { return cutUTF8(storable(name), maxToolName) }

// storable makes model-supplied text storable as Postgres text, which
// holds neither NUL bytes nor invalid UTF-8: a call the model garbled must
// not make its run impossible to store.
func storable(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// OutcomeCounts tallies calls by tool and outcome:
// {"grep": {"hit": 3, "empty": 1}, …}. It is empty, never nil, for a run
// without tool calls.
func OutcomeCounts(calls []ToolCall) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, c := range calls {
		m := out[c.Tool]
		if m == nil {
			m = map[string]int{}
			out[c.Tool] = m
		}
		m[string(c.Outcome)]++
	}
	return out
}

// outcomeOf classifies a call from its error (nil on success) and result.
func outcomeOf(err error, res toolResult) ToolOutcome {
	if err != nil {
		if te, ok := err.(*toolError); ok && te.outcome != "" {
			return te.outcome
		}
		return OutcomeError
	}
	if res.empty {
		return OutcomeEmpty
	}
	return OutcomeHit
}
