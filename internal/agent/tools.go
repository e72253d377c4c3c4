package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/reviewfleet/reviewfleet/internal/untrusted"
)

// toolResult is what a repository tool returns on success.
type toolResult struct {
	text string
	// fact reports whether the result holds repository content that
	// tool_fact evidence may cite (an empty search result does not).
	fact bool
	// empty reports a call that ran and found nothing: no match, no
	// definition, an empty directory or file.
	empty bool
}

// callOutcome is the result of one tool call as the loop sees it.
type callOutcome struct {
	text      string // the tool message sent back to the model
	signature string // tool name and canonical arguments
	verdict   *submission
	// record describes a repository tool call for the run's record; nil
	// for submit_verdict.
	record *ToolCall
}

// toolbox executes the model's tool calls inside the sandbox, with time
// budgets, the search budget and the record of facts.
type toolbox struct {
	cfg     Config
	sb      *sandbox
	backoff *backoff
	tracker *tracker
	facts   *facts
	// fence wraps results that hold repository content.
	fence untrusted.Fence
	// partial is set when the snapshot holds only the changed files:
	// empty searches and missing files then say so.
	partial bool
}

// partialNote ends the empty results and missing-file errors of a snapshot
// that holds only the changed files, so the model does not take a file it
// cannot see for a file that does not exist.
const partialNote = "\nnote: this review's snapshot holds only the files the change touched (the repository itself was not available), so other files of the repository cannot be read or searched here"

func newToolbox(cfg Config, sb *sandbox, tr *tracker, fence untrusted.Fence) *toolbox {
	return &toolbox{
		cfg: cfg, sb: sb, tracker: tr, facts: &facts{}, fence: fence,
		backoff: newBackoff(cfg.ReadTimeout, cfg.ScanTimeout, cfg.MaxToolTimeout),
	}
}

// execute runs one tool call. Every failure caused by the call (bad
// arguments, refused paths, timeouts, unknown tools) becomes an "error: …"
// tool message; the returned error is only ever the run's context error.
// When submitOnly is set (the forced summarize rounds), every tool but
// submit_verdict is refused.
//
// Each call is a span "execute_tool NAME" (GenAI semantic conventions);
// a refused call carries error.type "tool_error" and the message the model
// was sent, never the underlying error.
func (tb *toolbox) execute(ctx context.Context, call openai.ToolCall, submitOnly bool) (callOutcome, error) {
	name, raw := call.Function.Name, call.Function.Arguments
	ctx, span := otel.Tracer("reviewfleet/agent").Start(ctx, "execute_tool "+name, trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", name),
		attribute.String("gen_ai.tool.call.id", call.ID),
		attribute.String("gen_ai.tool.type", "function"),
	))
	defer span.End()
	out := callOutcome{signature: name + " " + canonicalArgs(raw)}
	start := time.Now()
	res, err := tb.dispatch(ctx, name, raw, submitOnly, &out)
	if name != toolSubmitVerdict {
		out.record = &ToolCall{Tool: recordTool(name), Args: recordArgs(raw), Outcome: outcomeOf(err, res), Latency: time.Since(start)}
		if err == nil {
			out.record.ResultBytes = len(res.text)
		}
		span.SetAttributes(attribute.String("reviewfleet.tool.outcome", string(out.record.Outcome)))
	}
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			span.SetStatus(codes.Error, cerr.Error())
			return out, cerr
		}
		var te *toolError
		if !errors.As(err, &te) {
			// Anything else is unexpected; its text may hold absolute
			// paths, so it is not passed on.
			te = &toolError{msg: name + " failed"}
		}
		out.text = "error: " + te.msg
		if te.missing && tb.partial {
			out.text += partialNote
		}
		span.SetAttributes(attribute.String("error.type", "tool_error"))
		span.SetStatus(codes.Error, te.msg)
		return out, nil
	}
	span.SetAttributes(attribute.Int("reviewfleet.tool.result_bytes", len(res.text)))
	out.text = truncateResult(res.text, tb.cfg.MaxResultBytes)
	if res.empty && tb.partial && name != toolReadFile {
		out.text += partialNote
	}
	if res.fact {
		tb.facts.add(name, out.text)
		// Repository content is data, never instructions: fenced so a
		// file cannot pose as the runtime or the user.
		out.text = tb.fence.Wrap(name+" result", out.text)
	}
	return out, nil
}

func (tb *toolbox) dispatch(ctx context.Context, name, raw string, submitOnly bool, out *callOutcome) (toolResult, error) {
	if name == toolSubmitVerdict {
		sub, err := parseVerdict(raw)
		if err != nil {
			return toolResult{}, err
		}
		out.verdict = &sub
		return toolResult{text: "verdict received"}, nil
	}
	if submitOnly {
		return toolResult{}, refusedf("the tools are closed: the round budget is spent. Reply with your verdict as a JSON object in your message text")
	}
	switch name {
	case toolReadFile:
		var a readFileArgs
		if err := decodeArgs(name, raw, &a); err != nil {
			return toolResult{}, err
		}
		res, err := tb.timed(ctx, name, scopeKey(name, a.Path), func(ctx context.Context) (toolResult, error) {
			return readFileTool(ctx, tb.sb, a, tb.cfg.MaxReadLines)
		})
		if err == nil {
			rel, _ := cleanRel(a.Path)
			tb.tracker.recordRead(rel)
		}
		return res, err
	case toolListDir:
		var a listDirArgs
		if err := decodeArgs(name, raw, &a); err != nil {
			return toolResult{}, err
		}
		if err := tb.spendSearch(); err != nil {
			return toolResult{}, err
		}
		res, err := tb.timed(ctx, name, scopeKey(name, a.Path), func(ctx context.Context) (toolResult, error) {
			return listDirTool(ctx, tb.sb, a)
		})
		if err == nil {
			rel, _ := cleanRel(a.Path)
			tb.tracker.recordQuery("dir:" + rel)
		}
		return res, err
	case toolGrep:
		var a grepArgs
		if err := decodeArgs(name, raw, &a); err != nil {
			return toolResult{}, err
		}
		if err := tb.spendSearch(); err != nil {
			return toolResult{}, err
		}
		res, err := tb.timed(ctx, name, scopeKey(name, a.PathGlob), func(ctx context.Context) (toolResult, error) {
			return grepTool(ctx, tb.sb, tb.cfg.Ignore, a)
		})
		if err == nil {
			tb.tracker.recordPattern(a.Pattern, a.PathGlob)
		}
		return res, err
	case toolFindSymbol:
		var a findSymbolArgs
		if err := decodeArgs(name, raw, &a); err != nil {
			return toolResult{}, err
		}
		if err := tb.spendSearch(); err != nil {
			return toolResult{}, err
		}
		res, err := tb.timed(ctx, name, scopeKey(name, ""), func(ctx context.Context) (toolResult, error) {
			return findSymbolTool(ctx, tb.sb, tb.cfg.Ignore, a)
		})
		if err == nil {
			tb.tracker.recordQuery("symbol:" + a.Name)
		}
		return res, err
	}
	return toolResult{}, toolErrorf("unknown tool %q: the tools are read_file, grep, list_dir, find_symbol and submit_verdict", name)
}

// spendSearch takes one call from the search budget, or refuses the call
// when the budget is spent.
func (tb *toolbox) spendSearch() error {
	if tb.tracker.searchesLeft() == 0 {
		return refusedf("the search budget is spent (%d grep, find_symbol and list_dir calls): read the files you have found or submit your verdict", tb.cfg.SearchBudget)
	}
	tb.tracker.recordSearch()
	return nil
}

// timed runs fn within the time budget of the signature key and doubles
// that budget for the next call when fn runs out of time.
func (tb *toolbox) timed(ctx context.Context, tool, key string, fn func(context.Context) (toolResult, error)) (toolResult, error) {
	budget := tb.backoff.budget(tool, key)
	tctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	var res toolResult
	var err error
	if tb.cfg.toolHook != nil {
		err = tb.cfg.toolHook(tctx, tool, budget)
	}
	if err == nil {
		res, err = fn(tctx)
	}
	if err == nil {
		return res, nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return toolResult{}, cerr
	}
	if errors.Is(err, context.DeadlineExceeded) || tctx.Err() != nil {
		tb.backoff.timedOut(key)
		return toolResult{}, &toolError{outcome: OutcomeTimeout, msg: fmt.Sprintf("%s timed out after %s; the next call with the same scope gets %s. Narrow it: %s",
			tool, budget, tb.backoff.budget(tool, key), narrowHint(tool))}
	}
	return toolResult{}, err
}

func narrowHint(tool string) string {
	switch tool {
	case toolGrep:
		return "use a more specific path_glob or pattern"
	case toolFindSymbol:
		return "use grep with a path_glob instead"
	}
	return "read a smaller line range"
}
