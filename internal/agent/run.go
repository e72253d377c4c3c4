package agent

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/redact"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/untrusted"
)

// ChatModel is the one LLM call the runtime needs. The LLM client satisfies
// it through a small adapter; tests pass a go-openai client directly.
type ChatModel interface {
	Chat(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

// Run investigates one finding and returns its verdict. It returns an error
// only when ctx is cancelled or the model fails with an error that
// cfg.IsRetryable accepts; in both cases the Result describes the run so far.
// Everything else, a passed deadline included, ends in a Result whose
// StopReason says why the run stopped.
func Run(ctx context.Context, model ChatModel, task Task, cfg Config) (Result, error) {
	start := time.Now()
	cfg = cfg.withDefaults()
	r := &runner{model: model, task: task, cfg: cfg}
	r.res = Result{ToolCalls: map[string]int{}, Phases: []PhaseChange{}}
	res, err := r.run(ctx)
	res.Duration = time.Since(start)
	return res, err
}

// runner holds the state of one run.
type runner struct {
	model   ChatModel
	task    Task
	cfg     Config
	tracker *tracker
	tools   *toolbox
	repeat  repeatDetector
	missing int // replies in a row without a tool call
	msgs    []openai.ChatCompletionMessage
	res     Result
}

func (r *runner) run(ctx context.Context) (Result, error) {
	if r.model == nil {
		return r.unfinished(StopError, errNoModel), nil
	}
	if err := checkSummarySchema(r.cfg); err != nil {
		return r.unfinished(StopError, err), nil
	}
	sb, err := newSandbox(r.task.Root, r.cfg.MaxFileBytes, r.cfg.Deny)
	if err != nil {
		return r.unfinished(StopError, fmt.Errorf("open snapshot for finding %d: %w", r.task.FindingID, err)), nil
	}
	defer sb.close()
	r.tracker = newTracker(r.cfg, r.task.File)
	fence := untrusted.New()
	r.tools = newToolbox(r.cfg, sb, r.tracker, fence)
	r.tools.partial = r.task.ChangedFilesOnly
	r.repeat = repeatDetector{threshold: r.cfg.RepeatThreshold}
	r.msgs = initialMessages(r.task, r.cfg, fence)

	for {
		if r.tracker.hardStop() {
			return r.unfinished(StopBudgetExhausted, nil), nil
		}
		if err := ctx.Err(); err != nil {
			return r.contextDone(err)
		}
		r.tracker.beginRound()
		r.res.Rounds++
		resp, err := r.model.Chat(ctx, r.request())
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return r.contextDone(cerr)
			}
			callErr := fmt.Errorf("model call in round %d: %w", r.res.Rounds, err)
			if r.cfg.IsRetryable != nil && r.cfg.IsRetryable(err) {
				return r.unfinished(StopError, callErr), fmt.Errorf("expert run for finding %d, round %d: %w", r.task.FindingID, r.res.Rounds, err)
			}
			return r.unfinished(StopError, callErr), nil
		}
		r.res.TokensIn += resp.Usage.PromptTokens
		r.res.TokensOut += resp.Usage.CompletionTokens

		done, nudge, err := r.handleReply(ctx, resp)
		if err != nil {
			return r.contextDone(err)
		}
		if done {
			return r.res, nil
		}
		r.tracker.endRound()
		if nudge == "" {
			_, nudge = r.tracker.takeNudge()
		}
		if r.res.Rounds >= r.cfg.MaxRounds && !r.tracker.forced {
			nudge = r.tracker.forceSummarize()
		}
		if nudge != "" {
			r.msgs = append(r.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: nudge})
		}
	}
}

// handleReply processes one model reply. done reports that the run has
// ended (r.res is final); nudge is a reminder owed to the model; err is the
// run's context error.
func (r *runner) handleReply(ctx context.Context, resp openai.ChatCompletionResponse) (done bool, nudge string, err error) {
	var msg openai.ChatCompletionMessage
	if len(resp.Choices) > 0 {
		msg = resp.Choices[0].Message
	}
	forced := r.tracker.forced
	if len(msg.ToolCalls) == 0 {
		if strings.TrimSpace(msg.Content) != "" {
			r.msgs = append(r.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: msg.Content})
		}
		if forced {
			// Text is the expected channel now; the hard stop, not the
			// completion protocol, ends a run that never delivers.
			done, nudge = r.finishFromText(msg.Content)
			return done, nudge, nil
		}
		if reasoningOnly(msg) {
			// Seed 001: a reply that carries only thinking is not a
			// missing completion signal; the model is asked to go on.
			return false, completionReminder, nil
		}
		r.missing++
		if r.missing >= r.cfg.MaxMissingCompletion {
			r.res = r.unfinished(StopMissingCompletion, nil)
			return true, "", nil
		}
		return false, completionReminder, nil
	}
	r.missing = 0
	calls := slices.Clone(msg.ToolCalls)
	for i := range calls {
		if calls[i].ID == "" {
			calls[i].ID = fmt.Sprintf("call_%d_%d", r.res.Rounds, i)
		}
		calls[i].Type = openai.ToolTypeFunction
	}
	r.msgs = append(r.msgs, openai.ChatCompletionMessage{
		Role: openai.ChatMessageRoleAssistant, Content: msg.Content, ToolCalls: calls,
	})
	var round []call
	run := 0
	for _, tc := range calls {
		if tc.Function.Name != toolSubmitVerdict {
			run++
		}
		if run > r.cfg.MaxToolCallsPerRound && tc.Function.Name != toolSubmitVerdict {
			// Issue 11 point 5: a reply may ask for any number of calls;
			// past the cap each one gets an error the model can read.
			r.msgs = append(r.msgs, openai.ChatCompletionMessage{
				Role: openai.ChatMessageRoleTool, Content: tooManyCalls(r.cfg.MaxToolCallsPerRound), ToolCallID: tc.ID,
			})
			r.record(ToolCall{Tool: recordTool(tc.Function.Name), Args: recordArgs(tc.Function.Arguments), Outcome: OutcomeRefused})
			continue
		}
		out, err := r.tools.execute(ctx, tc, forced)
		if err != nil {
			return false, "", err
		}
		r.res.ToolCalls[recordTool(tc.Function.Name)]++
		if out.record != nil {
			r.record(*out.record)
		}
		r.msgs = append(r.msgs, openai.ChatCompletionMessage{
			Role: openai.ChatMessageRoleTool, Content: out.text, ToolCallID: tc.ID,
		})
		if out.verdict != nil {
			r.finish(*out.verdict)
			return true, "", nil
		}
		round = append(round, call{signature: out.signature, result: out.text})
	}
	if remind, stop, period := r.repeat.observeRound(round); stop {
		r.res = r.unfinished(StopRepeatCycle, nil)
		r.res.Reasoning = fmt.Sprintf("the same %d-round loop of calls and results went on after a reminder", period)
		return true, "", nil
	} else if remind {
		nudge = repeatReminder(period)
	}
	if forced {
		// No submit_verdict call got through: the text may still carry
		// the verdict the forced rounds ask for.
		done, reminder := r.finishFromText(msg.Content)
		if done {
			return true, "", nil
		}
		if nudge == "" {
			nudge = reminder
		}
	}
	return false, nudge, nil
}

// record adds a repository tool call to the run's record.
func (r *runner) record(c ToolCall) {
	c.Round, c.Seq = r.res.Rounds, len(r.res.Calls)+1
	r.res.Calls = append(r.res.Calls, c)
}

// finishFromText ends a forced summarize round whose reply carries no
// accepted submit_verdict call: a verdict parsed from the reply's text goes
// through the accept gate and ends the run; otherwise the returned reminder
// asks for the verdict again, naming the problems of a verdict that did not
// validate.
func (r *runner) finishFromText(text string) (done bool, reminder string) {
	sub, found, err := textVerdict(text)
	switch {
	case err == nil && found:
		r.finish(sub)
		return true, ""
	case found:
		return false, textVerdictRejected(err.Error())
	}
	return false, textVerdictReminder
}

// request builds the next chat request. In the forced summarize rounds
// tool_choice is "none" and the verdict is expected as JSON in the reply's
// text; submit_verdict stays listed because tool_choice is only valid with
// tools, and an endpoint that ignores "none" can then offer nothing but the
// verdict. With Config.SummarySchema set, those rounds also ask for a
// structured reply in that schema.
func (r *runner) request() openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{
		Model:    r.cfg.Model,
		Messages: slices.Clone(r.msgs),
		Tools:    ToolDefinitions(),
	}
	if r.tracker.forced {
		req.Tools = []openai.Tool{submitVerdictTool()}
		req.ToolChoice = toolChoiceNone
		req.ResponseFormat = summaryFormat(r.cfg)
	}
	return req
}

// toolChoiceNone forbids tool calls. It must stay an untyped string: the
// client compares tool_choice with "none" when it validates a request.
const toolChoiceNone = "none"

// finish puts a submitted verdict through the accept gate.
func (r *runner) finish(sub submission) {
	judge(&r.res, sub, r.tools.sb, r.tools.facts, r.cfg, citeOf(r.task, r.cfg))
	r.res.Phases = r.phases()
}

// judge puts a validated verdict through the accept gate and records the
// outcome in res: the verdict as submitted when every required check
// passes, its confidence lowered by failFactor when one fails. Only a
// conclusion the gate let through is "accepted": an inconclusive verdict
// that passes ends the run as StopInconclusive, so a stop reason never
// reads as acceptance next to a verdict that established nothing.
func judge(res *Result, sub submission, sb *sandbox, f *facts, cfg Config, cite citation) {
	failFactor := cfg.AcceptFailFactor
	results, ok := acceptGate(sb, f, sub.evidence, sub.verdict, cite)
	res.Verdict = sub.verdict
	res.Reasoning = sub.reasoning
	res.Evidence = sub.evidence
	res.CheckResults = results
	res.Confidence = review.ClampConfidence(sub.confidence)
	res.StopReason = StopAccepted
	if sub.verdict == review.VerdictInconclusive {
		res.StopReason = StopInconclusive
	}
	if !ok {
		res.Confidence = review.ClampConfidence(sub.confidence * failFactor)
		res.StopReason = StopAcceptCheckFailed
	}
}

// unfinished returns the result of a run that stopped without a verdict:
// inconclusive, with the finding's confidence lowered by AcceptFailFactor.
// err is the failure of a run that stops with StopError, nil otherwise.
func (r *runner) unfinished(reason StopReason, err error) Result {
	res := withoutVerdict(r.res, r.task, r.cfg, reason, err)
	res.Phases = r.phases()
	return res
}

// withoutVerdict completes res as the result of an investigation that
// produced no usable verdict.
func withoutVerdict(res Result, task Task, cfg Config, reason StopReason, err error) Result {
	res.Verdict = review.VerdictInconclusive
	res.Confidence = review.ClampConfidence(review.ClampConfidence(task.Confidence) * cfg.AcceptFailFactor)
	res.StopReason = reason
	res.Err = err
	res.Error = ""
	if err != nil {
		res.Error = err.Error()
	}
	return res
}

// contextDone ends the run on its context: a passed deadline is a timeout,
// a cancellation is returned to the caller.
func (r *runner) contextDone(err error) (Result, error) {
	if errors.Is(err, context.DeadlineExceeded) {
		return r.unfinished(StopTimeout, nil), nil
	}
	return r.unfinished(StopError, err), fmt.Errorf("expert run for finding %d: %w", r.task.FindingID, err)
}

// phases returns the phase changes so far, never nil.
func (r *runner) phases() []PhaseChange {
	if r.tracker == nil || len(r.tracker.changes) == 0 {
		return []PhaseChange{}
	}
	return slices.Clone(r.tracker.changes)
}

// initialMessages opens the conversation: the system prompt with the
// runtime's rules and the rules for untrusted text, then the finding.
func initialMessages(t Task, cfg Config, fence untrusted.Fence) []openai.ChatCompletionMessage {
	sys := strings.TrimSpace(t.SystemPrompt)
	if sys == "" {
		sys = defaultSystemPrompt
	}
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: sys + "\n\n" + protocolRules(cfg) + "\n\n" + fence.Rules() + "\n\n" + redact.PromptNote},
		{Role: openai.ChatMessageRoleUser, Content: taskMessage(t, fence)},
	}
}

// citeOf is the location the task's finding cites, for the accept gate.
func citeOf(t Task, cfg Config) citation {
	return citation{path: t.File, start: t.LineStart, end: max(t.LineEnd, t.LineStart), window: cfg.QuoteWindow}
}

// thinkBlock matches the <think>…</think> blocks some models put in content.
var thinkBlock = regexp.MustCompile(`(?s)<think>.*?</think>`)

// reasoningOnly reports a reply with no tool call whose only content is
// reasoning: reasoning_content, or text that is nothing but think blocks.
func reasoningOnly(msg openai.ChatCompletionMessage) bool {
	visible := strings.TrimSpace(thinkBlock.ReplaceAllString(msg.Content, ""))
	return visible == "" && (strings.TrimSpace(msg.ReasoningContent) != "" || strings.TrimSpace(msg.Content) != "")
}

// tooManyCalls is the tool error of a call past the per-round cap.
func tooManyCalls(n int) string {
	return fmt.Sprintf("error: not run — at most %d tool calls are run per reply, and this reply asked for more. "+
		"Ask again for the calls you still need in your next reply, a few at a time.", n)
}
