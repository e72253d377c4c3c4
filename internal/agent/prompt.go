package agent

import (
	"fmt"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/untrusted"
)

// defaultSystemPrompt is used when the task brings no prompt of its own.
const defaultSystemPrompt = `You are a senior engineer verifying one finding of an automated code review.
Decide from the code itself whether the finding is real.`

// protocolRules returns the runtime's rules, appended to every system
// prompt.
func protocolRules(cfg Config) string {
	return fmt.Sprintf(`How this investigation works:
- The repository is the head snapshot of the change. Use read_file, grep, list_dir and find_symbol to read it; paths are relative to the repository root.
- You have %d rounds and %d search calls (grep, find_symbol, list_dir). Explore first, then verify the specific claim, then submit.
- The investigation ends only when you call submit_verdict with verdict confirmed, refuted or inconclusive, a confidence between 0 and 1, your reasoning and evidence. Once the round budget is spent the tools close, and you give the same verdict as a JSON object in your message text instead.
- Evidence items are checked by the runtime: file_exists (path), content_contains (path, start_line, end_line, match: text that appears in those lines) and tool_fact (match: text that appeared in a tool result you received). Quote the code exactly; a required item that does not check out lowers your verdict.
- A confirmed verdict needs at least one required evidence item. Evidence items are required unless you set "required": false.`,
		cfg.MaxRounds, cfg.SearchBudget)
}

// taskMessage describes the finding to investigate. The finding (an
// earlier model's reading of the change, naming a repository file) and the
// context, taken from the change, are fenced.
func taskMessage(t Task, fence untrusted.Fence) string {
	var b strings.Builder
	// No database id: it differs between runs of the same review, and a
	// replayed review must send the same prompt as the recorded one.
	b.WriteString(fence.Wrap("finding to investigate", FindingText(t)))
	fmt.Fprintf(&b, "Confidence so far: %.2f\n", t.Confidence)
	if c := strings.TrimSpace(t.Context); c != "" {
		fmt.Fprintf(&b, "\nContext:\n%s", fence.Wrap("context from the change", c))
	}
	b.WriteString("\nInvestigate whether this finding is real and finish with submit_verdict.")
	return b.String()
}

// FindingText is the finding of t as the model is shown it, to be fenced:
// its risk type and description, and its location with the file's name
// quoted when it could break a line.
func FindingText(t Task) string {
	return fmt.Sprintf("Finding (%s): %s\nLocation: %s lines %d-%d", t.RiskType, t.Description, untrusted.Name(t.File), t.LineStart, t.LineEnd)
}

func transitionNudge(m Metrics) string {
	switch m.Phase {
	case PhaseVerify:
		return phaseLine(m) + " You have explored enough. Now verify the specific claim: read the exact lines involved and collect the evidence you will cite."
	case PhaseSummarize:
		return phaseLine(m) + " Stop exploring. Submit your verdict with submit_verdict, citing the evidence you already have."
	}
	return phaseLine(m) + fmt.Sprintf(" You are now in the %s phase.", m.Phase)
}

func budgetWarningNudge(m Metrics) string {
	return phaseLine(m) + fmt.Sprintf(" Only %d rounds are left. Focus on the evidence that decides the finding and prepare your verdict.", max(0, m.MaxRounds-m.Round))
}

func convergenceNudge(m Metrics) string {
	return phaseLine(m) + fmt.Sprintf(" The last %d rounds brought nothing new. If you can decide, submit your verdict; otherwise change your approach instead of repeating searches.", m.RoundsSinceNewInfo)
}

func reflectionNudge(m Metrics) string {
	return phaseLine(m) + " Pause and take stock: what have you established, what is still open, and which single step would settle it?"
}

// verdictJSONExample shows the shape of a verdict written as text: the
// submit_verdict arguments.
const verdictJSONExample = `{"verdict": "confirmed|refuted|inconclusive", "confidence": 0.0-1.0, "reasoning": "...", "evidence": [{"kind": "file_exists|content_contains|tool_fact", "path": "...", "start_line": 1, "end_line": 2, "match": "...", "required": true}]}`

func forcedNudge(rounds int) string {
	return fmt.Sprintf(`The round budget is spent and the tools are closed. Reply now with your verdict as one JSON object in your message text, with exactly the submit_verdict arguments:
%s
Cite only evidence you have already seen; it is checked as usual. The investigation stops in %d rounds.`, verdictJSONExample, rounds)
}

// textVerdictReminder answers a forced summarize reply without a verdict.
const textVerdictReminder = "Your reply contained no verdict. Reply with your verdict as one JSON object with the submit_verdict arguments (verdict, confidence, reasoning, evidence)."

// textVerdictRejected answers a forced summarize reply whose verdict did not
// validate.
func textVerdictRejected(problems string) string {
	problems = strings.TrimSpace(strings.TrimPrefix(problems, verdictRejected))
	return "The verdict in your reply could not be used:\n" + problems + "\nReply with the corrected JSON object."
}

const completionReminder = "Your reply contained no tool call. The investigation ends only through submit_verdict: call a tool to continue, or submit_verdict to finish."

func repeatReminder(period int) string {
	what := "the same call"
	if period > 1 {
		what = fmt.Sprintf("the same %d calls in turn", period)
	}
	return fmt.Sprintf("You keep making %s and getting the same results. Repeating it will not tell you anything new: try something different or submit your verdict. One more round of the same stops the investigation.", what)
}
