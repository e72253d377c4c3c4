// Package expert is the investigation stage: for each finding that survived
// verify, a tool-using agent explores the head snapshot of the repository
// (read-only, sandboxed) and ends with a verdict that the runtime's accept
// gate checks against the snapshot. The run's record (stop reason, rounds,
// tool calls, phases, tokens) is stored with the verdict.
package expert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/agent"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/diff"
	"github.com/reviewfleet/reviewfleet/internal/llm"
	"github.com/reviewfleet/reviewfleet/internal/metrics"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/prompts"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/untrusted"
	"github.com/reviewfleet/reviewfleet/store"
)

// Chatter is the LLM capability the stage needs: chat with tools for the
// agent, one structured call for the fallback.
type Chatter interface {
	Chat(ctx context.Context, meta llm.Meta, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
	Structured(ctx context.Context, meta llm.Meta, req llm.StructuredRequest, out any) (llm.Usage, error)
}

// SchemaName names the structured-output schema of this stage: the
// verdict the agent gives in its forced summary, and the single call made
// when an endpoint refuses tool calls.
const SchemaName = "reviewfleet_expert"

// Snapshots finds (or builds) the directory holding a review's head tree
// and keeps it on disk until release is called.
type Snapshots interface {
	Acquire(ctx context.Context, r review.Review) (root string, release func(), err error)
}

// Handler runs expert tasks.
type Handler struct {
	Store     *store.Store
	LLM       Chatter
	Prompts   *prompts.Set
	Snapshots Snapshots
	// Ignore reports files the review ignores; the agent's scans skip them.
	Ignore func(path string) bool
}

// chatModel binds the LLM client to one item so the agent can call it.
type chatModel struct {
	c    Chatter
	meta llm.Meta
}

func (m chatModel) Chat(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return m.c.Chat(ctx, m.meta, req)
}

// Work handles one expert item.
func (h *Handler) Work(ctx context.Context, j pipeline.Job) error {
	p := j.Payload
	t, err := pipeline.LoadFinding(ctx, h.Store, j)
	if err != nil {
		return err
	}
	r, cfg, f := t.Review, t.Config, t.Finding
	root, release, err := h.Snapshots.Acquire(ctx, r)
	if err != nil {
		return fmt.Errorf("head snapshot of review %s: %w", r.ID, err)
	}
	defer release()
	changedOnly, err := h.changedFilesOnly(ctx, r)
	if err != nil {
		return err
	}
	model := cfg.LLM.ModelFor(review.StageExpert)
	change, err := h.context(ctx, r.ID, f)
	if err != nil {
		return err
	}
	task := agent.Task{
		FindingID: f.ID, RiskType: f.RiskType, File: f.File, LineStart: f.LineStart, LineEnd: f.LineEnd,
		Description: f.Description, Confidence: f.Confidence, Root: root, Context: change,
		ChangedFilesOnly: changedOnly,
	}
	// References (ORM semantics, nullable APIs…) only when the change uses them.
	task.SystemPrompt = h.Prompts.ExpertSystem(f.RiskType, prompts.DetectReferences(task.Context))
	runCtx, cancel := context.WithTimeout(ctx, cfg.Expert.RunTimeout)
	defer cancel()
	meta := llm.Meta{ReviewID: r.ID, Stage: string(review.StageExpert), ItemKey: p.Item, Model: model}
	ac := agentConfig(cfg, model, h.Ignore)
	ac.SummarySchema, ac.SummarySchemaName = h.Prompts.Schema("expert"), SchemaName
	res, err := agent.Run(runCtx, chatModel{c: h.LLM, meta: meta}, task, ac)
	countToolCalls(res.Calls)
	if cerr := ctx.Err(); cerr != nil {
		// The task itself was cancelled (shutdown, lost lease) or ran out
		// of time: whatever the run recorded says nothing about the
		// finding. The pipeline gives the item back.
		return fmt.Errorf("expert run for finding %d interrupted after %d rounds: %w", f.ID, res.Rounds, cerr)
	}
	if err != nil {
		return err // rate limited: retried without using an attempt
	}
	if res.StopReason == agent.StopError && errors.Is(res.Err, llm.ErrBudgetExceeded) {
		// The review's LLM budget is spent: the pipeline skips the item.
		return fmt.Errorf("expert run for finding %d after %d rounds: %w", f.ID, res.Rounds, res.Err)
	}
	transient := res.StopReason == agent.StopError && res.Err != nil && !llm.IsPermanent(res.Err)
	if refusesTools(res) {
		// The endpoint will not take tool calls at all: fall back to one
		// structured verdict, still checked by the accept gate. Whatever it
		// gives is recorded, not retried.
		if res, err = h.single(ctx, meta, task, ac); err != nil {
			if !errors.Is(err, pipeline.ErrPermanent) {
				return err
			}
			// The fallback failed for good: a failed check, recorded
			// with its reason and lowering the finding.
			res = agent.Result{StopReason: agent.StopError, Err: err, Error: err.Error(), Rounds: 1}
		}
		transient = false
	}
	if transient && !pipeline.LastAttempt(ctx) {
		// A transport failure (5xx, network, timeout of a request): retry
		// rather than record a verdict built on nothing. The last attempt
		// records the run with its error, and the finding keeps its
		// confidence. Permanent errors are recorded at once.
		return fmt.Errorf("expert run for finding %d: %s", f.ID, res.Error)
	}
	res = storableResult(res)
	after, verdict := Apply(f.Confidence, cfg.Harness.VerifyConfidenceFloor, res)
	ev := evidence(res)
	v := review.Verdict{
		ReviewID: r.ID, FindingID: f.ID, Stage: review.StageExpert, Verdict: verdict,
		ConfidenceBefore: f.Confidence, ConfidenceAfter: after, Reason: reason(res), Evidence: ev,
		Model: model, TokensIn: res.TokensIn, TokensOut: res.TokensOut, Latency: res.Duration,
	}
	return h.Store.FinishVerdictItem(ctx, p.Item, v, runRecord(f.ID, res))
}

// Apply is the expert step of review.Confidence. Only a run that ends
// accepted — its evidence checked against the snapshot — can raise the
// finding: a confirmed verdict takes the agent's confidence, a refuted one
// caps it at 0.3. Every other ending is inconclusive: a verdict whose
// evidence failed the accept gate, or a run that stopped on a cycle or
// without a verdict, was not established and ends at most at the floor
// (and at the lowered confidence the runtime gives). A timeout or an error is a failed check: the
// verdict is "failed" and the finding ends at most at the floor, so a
// finding nobody could check is never reported above the threshold.
func Apply(before, floor float64, res agent.Result) (after float64, verdict string) {
	outcome := review.VerdictInconclusive
	verdict = review.VerdictInconclusive
	switch res.StopReason {
	case agent.StopAccepted:
		if res.Verdict == review.VerdictConfirmed || res.Verdict == review.VerdictRefuted {
			outcome, verdict = res.Verdict, res.Verdict
		}
	case agent.StopInconclusive:
		// The expert said it could not decide: inconclusive, as above.
	case agent.StopAcceptCheckFailed:
		outcome = review.ExpertAcceptCheckFailed
	case agent.StopTimeout, agent.StopError:
		outcome, verdict = review.VerdictFailed, review.VerdictFailed
	}
	return review.Confidence(review.Outcome{Start: before, Floor: floor, Expert: outcome, ExpertConfidence: res.Confidence}), verdict
}

func agentConfig(cfg config.Config, model string, ignore func(string) bool) agent.Config {
	ac := agent.Config{}
	ac.Model = model
	ac.MaxRounds = cfg.Expert.MaxRounds
	ac.SearchBudget = cfg.Expert.SearchBudget
	ac.GracefulExitRounds = cfg.Expert.GracefulExitRounds
	ac.RepeatThreshold = cfg.Expert.RepeatThreshold
	ac.MaxMissingCompletion = cfg.Expert.MaxMissingCompletion
	ac.MaxToolCallsPerRound = cfg.Expert.MaxToolCallsPerRound
	ac.AcceptFailFactor = cfg.Expert.AcceptFailFactor
	ac.ConvergenceRounds = cfg.Expert.ConvergenceRounds
	ac.BudgetWarningAt = cfg.Expert.BudgetWarningAt
	ac.ReflectionEvery = cfg.Expert.ReflectionEvery
	ac.ReadTimeout, ac.ScanTimeout, ac.MaxToolTimeout = cfg.Expert.ReadTimeout, cfg.Expert.ScanTimeout, cfg.Expert.MaxToolTimeout
	ac.IsRetryable = func(err error) bool { _, rl := llm.IsRateLimited(err); return rl }
	ac.Ignore = ignore
	ac.Deny = cfg.Expert.SandboxDeny
	return ac
}

// context is the change to the finding's file, with new-side line
// numbers; empty when the file is not part of the change or its diff does
// not parse. A database error is returned, not taken for "no context".
func (h *Handler) context(ctx context.Context, reviewID string, f review.Finding) (string, error) {
	file, err := h.Store.GetFile(ctx, reviewID, f.File)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("load the change to %s: %w", untrusted.Name(f.File), err)
	}
	numbered, err := diff.NumberedText(file.Diff)
	if err != nil {
		return "", nil
	}
	return fmt.Sprintf("The change to %s, with new-side line numbers:\n```\n%s```\n", untrusted.Name(f.File), numbered), nil
}

func reason(res agent.Result) string {
	r := strings.TrimSpace(res.Reasoning)
	if res.StopReason != agent.StopAccepted && res.StopReason != agent.StopInconclusive {
		// A run that ended without a verdict the gate let through says how.
		r = strings.TrimSpace(fmt.Sprintf("[%s] %s", res.StopReason, r))
	}
	return r
}

func evidence(res agent.Result) json.RawMessage {
	items := []string{}
	for _, c := range res.CheckResults {
		status := "passed"
		if !c.Passed {
			status = "FAILED"
		}
		items = append(items, fmt.Sprintf("%s %s %s:%d-%d %q — %s", status, c.Kind, c.Path, c.StartLine, c.EndLine, c.Match, c.Detail))
	}
	b, _ := json.Marshal(items)
	return b
}

func runRecord(findingID int64, res agent.Result) *review.ExpertRun {
	tools, _ := json.Marshal(orEmptyMap(res.ToolCalls))
	phases, _ := json.Marshal(orEmpty(res.Phases))
	checks, _ := json.Marshal(orEmpty(res.CheckResults))
	outcomes, _ := json.Marshal(agent.OutcomeCounts(res.Calls))
	calls := make([]review.ExpertToolCall, len(res.Calls))
	for i, c := range res.Calls {
		calls[i] = review.ExpertToolCall{FindingID: findingID, Round: c.Round, Seq: c.Seq, Tool: c.Tool, Args: c.Args,
			Outcome: string(c.Outcome), ResultBytes: c.ResultBytes, Latency: c.Latency}
	}
	return &review.ExpertRun{
		FindingID: findingID, StopReason: string(res.StopReason), Rounds: res.Rounds,
		ToolCalls: tools, Phases: phases, Checks: checks, TokensIn: res.TokensIn, TokensOut: res.TokensOut,
		Duration: res.Duration.Round(time.Millisecond), Error: res.Error, ToolOutcomes: outcomes, Calls: calls,
	}
}

// storableResult returns res with the model's text made storable in
// Postgres text and jsonb, which refuse NUL bytes and invalid UTF-8: a
// verdict whose reasoning or evidence carries one must be recorded, not
// fail its item on every attempt.
func storableResult(res agent.Result) agent.Result {
	clean := func(s string) string {
		return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
	}
	res.Reasoning, res.Error = clean(res.Reasoning), clean(res.Error)
	if len(res.CheckResults) > 0 {
		checks := make([]agent.CheckResult, len(res.CheckResults))
		for i, c := range res.CheckResults {
			c.Kind, c.Path, c.Match, c.Detail = clean(c.Kind), clean(c.Path), clean(c.Match), clean(c.Detail)
			checks[i] = c
		}
		res.CheckResults = checks
	}
	return res
}

// changedFilesOnly reports whether the review's snapshot holds only its
// changed files. Acquire records that in the review when it falls back, so
// the first run of a review reads it again.
func (h *Handler) changedFilesOnly(ctx context.Context, r review.Review) (bool, error) {
	if r.SnapshotFallback != "" {
		return true, nil
	}
	cur, err := h.Store.GetReview(ctx, r.ID)
	if err != nil {
		return false, fmt.Errorf("snapshot of review %s: %w", r.ID, err)
	}
	return cur.SnapshotFallback != "", nil
}

// knownTools are the metric's tool labels; any other name the model
// invents counts as "other", so the label stays bounded.
var knownTools = map[string]bool{"read_file": true, "grep": true, "find_symbol": true, "list_dir": true}

// countToolCalls adds a run's tool calls to the tool-health metric: every
// call that ran, whether or not its verdict is stored.
func countToolCalls(calls []agent.ToolCall) {
	for _, c := range calls {
		tool := c.Tool
		if !knownTools[tool] {
			tool = "other"
		}
		metrics.ExpertToolCalls.WithLabelValues(tool, string(c.Outcome)).Inc()
	}
}

// orEmpty keeps JSON arrays as [] rather than null, for analysts' SQL.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func orEmptyMap(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

// refusesTools reports a run that failed on its first request with a
// client error (400, 404, 422…): an endpoint without function calling.
func refusesTools(res agent.Result) bool {
	if res.StopReason != agent.StopError || res.Rounds > 1 || res.Err == nil || errors.Is(res.Err, llm.ErrBudgetExceeded) {
		return false
	}
	code := llm.StatusCode(res.Err)
	return code >= 400 && code < 500 && llm.IsPermanent(res.Err)
}

// single asks for the verdict in one structured call and judges it.
func (h *Handler) single(ctx context.Context, meta llm.Meta, task agent.Task, ac agent.Config) (agent.Result, error) {
	var doc json.RawMessage
	start := time.Now()
	fence := untrusted.New()
	usage, err := h.LLM.Structured(ctx, meta, llm.StructuredRequest{
		System:     task.SystemPrompt + "\n\n" + untrusted.Instructions(fence),
		User:       singleMessage(task, fence),
		SchemaName: SchemaName,
		Schema:     h.Prompts.Schema("expert"),
	}, &doc)
	if err != nil {
		if llm.IsPermanent(err) {
			return agent.Result{}, pipeline.Permanent(err)
		}
		return agent.Result{}, err
	}
	res := agent.Judge(task, ac, doc)
	res.TokensIn, res.TokensOut, res.Duration = usage.PromptTokens, usage.CompletionTokens, time.Since(start)
	return res, nil
}

func singleMessage(t agent.Task, fence untrusted.Fence) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%sConfidence so far: %.2f\n\n%s",
		fence.Wrap("finding to investigate", agent.FindingText(t)), t.Confidence, fence.Wrap("context from the change", t.Context))
	b.WriteString("No tools are available. Judge the finding from the change above and give your verdict; " +
		"evidence items are checked against the repository (quote code exactly).")
	return b.String()
}
