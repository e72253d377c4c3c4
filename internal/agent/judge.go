package agent

import (
	"errors"
	"fmt"
	"time"
)

// errNoVerdict is the reason of a document that holds no verdict object.
var errNoVerdict = errors.New("the document holds no JSON object with a verdict field")

// Judge gives a verdict document the treatment a submitted verdict gets in
// a run, for a caller that obtained the verdict without one (for example a
// single structured call when the tool-using run is not available).
//
// The document holds the submit_verdict arguments as JSON; it is read as
// tolerantly as a verdict written as text in the forced summarize rounds
// (fenced blocks first, then the whole document, prose around the object
// ignored) and validated like submit_verdict. The evidence then goes
// through the accept gate against task.Root. No tool ran, so tool_fact
// checks fail.
//
// The Result follows the rules of a run: StopAccepted, StopInconclusive or
// StopAcceptCheckFailed as the gate decides, the confidence lowered by
// cfg.AcceptFailFactor when a required check fails; StopError with Err and
// Error naming the reason when the document is not a valid verdict or the
// snapshot cannot be opened. Rounds is 1, ToolCalls and Phases are empty.
func Judge(task Task, cfg Config, verdictJSON []byte) Result {
	start := time.Now()
	cfg = cfg.withDefaults()
	res := judgeDocument(task, cfg, verdictJSON)
	res.Rounds = 1
	res.ToolCalls = map[string]int{}
	res.Phases = []PhaseChange{}
	res.Duration = time.Since(start)
	return res
}

func judgeDocument(task Task, cfg Config, doc []byte) Result {
	sub, found, err := textVerdict(string(doc))
	switch {
	case !found:
		return withoutVerdict(Result{}, task, cfg, StopError, fmt.Errorf("judge verdict for finding %d: %w", task.FindingID, errNoVerdict))
	case err != nil:
		return withoutVerdict(Result{}, task, cfg, StopError, fmt.Errorf("judge verdict for finding %d: %w", task.FindingID, err))
	}
	sb, err := newSandbox(task.Root, cfg.MaxFileBytes, cfg.Deny)
	if err != nil {
		return withoutVerdict(Result{}, task, cfg, StopError, fmt.Errorf("open snapshot for finding %d: %w", task.FindingID, err))
	}
	defer sb.close()
	var res Result
	judge(&res, sub, sb, &facts{}, cfg, citeOf(task, cfg))
	return res
}
