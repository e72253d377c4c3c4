package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// confirmArgs is a confirmed verdict on the sample finding with evidence
// that checks out.
func confirmArgs() map[string]any {
	return map[string]any{
		"verdict": "confirmed", "confidence": 0.9,
		"reasoning": "Lookup returns nil for an unknown id and Touch dereferences it.",
		"evidence": []map[string]any{
			{"kind": "file_exists", "path": "internal/auth/session.go"},
			{"kind": "content_contains", "path": "internal/auth/session.go", "start_line": 16, "end_line": 17,
				"match": "sess := s.Lookup(id)\n   sess.Expires = sess.Expires.Add(ttl)"},
			{"kind": "tool_fact", "match": "sess := s.byID[id]"},
		},
	}
}

func TestRunAccepted(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	llm := newFakeLLM(t, llmfake.Script(
		llmfake.Tools(llmfake.ToolCall("read_file", map[string]any{"path": "internal/auth/session.go"})),
		llmfake.Tools(llmfake.ToolCall("submit_verdict", confirmArgs())),
	))
	res, err := Run(context.Background(), llm.model(), sampleTask(root), fastConfig())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.StopReason != StopAccepted {
		t.Fatalf("stop reason = %s, want accepted; checks %+v", res.StopReason, res.CheckResults)
	}
	if res.Verdict != review.VerdictConfirmed || res.Confidence != 0.9 {
		t.Errorf("verdict = %s %.2f, want confirmed 0.90", res.Verdict, res.Confidence)
	}
	if len(res.CheckResults) != 3 {
		t.Fatalf("got %d check results, want 3", len(res.CheckResults))
	}
	for _, c := range res.CheckResults {
		if !c.Passed {
			t.Errorf("check %s failed: %s", c.Kind, c.Detail)
		}
	}
	if res.Rounds != 2 || res.TokensIn != 200 || res.TokensOut != 20 {
		t.Errorf("rounds %d tokens %d/%d, want 2 and 200/20", res.Rounds, res.TokensIn, res.TokensOut)
	}
	if res.ToolCalls["read_file"] != 1 || res.ToolCalls["submit_verdict"] != 1 {
		t.Errorf("tool calls = %v", res.ToolCalls)
	}
	reqs := llm.requests()
	if len(reqs) != 2 {
		t.Fatalf("server saw %d requests, want 2", len(reqs))
	}
	if got := toolMessages(reqs[1]); len(got) != 1 || !strings.Contains(got[0], "10: \tsess := s.byID[id]") {
		t.Errorf("read_file result not sent back numbered: %q", got)
	}
	if len(reqs[0].Tools) != 5 || reqs[0].ToolChoice != nil {
		t.Errorf("first request offers %d tools with tool_choice %v, want all 5 and no choice", len(reqs[0].Tools), reqs[0].ToolChoice)
	}
}

func TestRunAcceptCheckFailedCatchesInventedQuote(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	args := confirmArgs()
	args["evidence"] = []map[string]any{
		{"kind": "content_contains", "path": "internal/auth/session.go", "start_line": 9, "end_line": 12,
			"match": "if sess == nil { return nil }"},
		{"kind": "tool_fact", "match": "sessions are never nil", "required": false},
	}
	llm := newFakeLLM(t, llmfake.Script(
		llmfake.Tools(llmfake.ToolCall("read_file", map[string]any{"path": "internal/auth/session.go", "start_line": 9, "end_line": 12})),
		llmfake.Tools(llmfake.ToolCall("submit_verdict", args)),
	))
	res, err := Run(context.Background(), llm.model(), sampleTask(root), fastConfig())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.StopReason != StopAcceptCheckFailed {
		t.Fatalf("stop reason = %s, want accept_check_failed", res.StopReason)
	}
	if res.Verdict != review.VerdictConfirmed || res.Confidence != 0.45 {
		t.Errorf("verdict = %s %.3f, want confirmed at 0.9 × 0.5", res.Verdict, res.Confidence)
	}
	if len(res.CheckResults) != 2 || res.CheckResults[0].Passed || res.CheckResults[1].Passed {
		t.Fatalf("check results = %+v, want both failed", res.CheckResults)
	}
	if !strings.Contains(res.CheckResults[0].Detail, "not found in internal/auth/session.go lines 9-12") {
		t.Errorf("failing check detail = %q", res.CheckResults[0].Detail)
	}
}

func TestRunRepeatCycle(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	same := func() llmfake.Reply {
		return llmfake.Tools(llmfake.ToolCall("grep", map[string]any{"pattern": "Lookup", "path_glob": "**/*.go"}))
	}
	llm := newFakeLLM(t, llmfake.Script(same(), same(), same(), same(), same()))
	res, err := Run(context.Background(), llm.model(), sampleTask(root), fastConfig())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.StopReason != StopRepeatCycle || res.Rounds != 4 {
		t.Fatalf("stop %s after %d rounds, want repeat_cycle after 4", res.StopReason, res.Rounds)
	}
	if res.Verdict != review.VerdictInconclusive || res.Confidence != 0.4 {
		t.Errorf("verdict = %s %.2f, want inconclusive 0.40", res.Verdict, res.Confidence)
	}
	reqs := llm.requests()
	if got := lastUserMessage(reqs[3]); !strings.Contains(got, "same call and getting the same results") {
		t.Errorf("4th request's last user message = %q, want the repeat reminder", got)
	}
	if got := lastUserMessage(reqs[2]); strings.Contains(got, "same call") {
		t.Errorf("reminder came too early: %q", got)
	}
}

func TestRunRepeatResetByDifferentCall(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	grep := func() llmfake.Reply {
		return llmfake.Tools(llmfake.ToolCall("grep", map[string]any{"pattern": "Lookup"}))
	}
	read := llmfake.Tools(llmfake.ToolCall("read_file", map[string]any{"path": "README.md"}))
	llm := newFakeLLM(t, llmfake.Script(grep(), grep(), grep(), read, grep(), grep(), llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{
		"verdict": "refuted", "confidence": 0.6, "reasoning": "callers check the id first", "evidence": []map[string]any{{"kind": "content_contains", "path": "internal/auth/session.go", "start_line": 10, "end_line": 10, "match": "sess := s.byID[id]", "required": true}},
	}))))
	res, err := Run(context.Background(), llm.model(), sampleTask(root), fastConfig())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.StopReason != StopAccepted || res.Verdict != review.VerdictRefuted {
		t.Fatalf("stop %s verdict %s, want an accepted refutation", res.StopReason, res.Verdict)
	}
}

func TestRunMissingCompletionSignal(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	// A complete, valid verdict written as text does not count before the
	// round budget is spent.
	llm := newFakeLLM(t, llmfake.Script(
		llmfake.Reply{Content: "I think this is a real bug."},
		llmfake.Reply{Content: "```json\n" + mustJSON(t, confirmArgs()) + "\n```"},
		llmfake.Reply{Content: "Final answer: confirmed."},
	))
	res, err := Run(context.Background(), llm.model(), sampleTask(root), fastConfig())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.StopReason != StopMissingCompletion || res.Rounds != 3 {
		t.Fatalf("stop %s after %d rounds, want missing_completion_signal after 3", res.StopReason, res.Rounds)
	}
	if res.Verdict != review.VerdictInconclusive || len(res.CheckResults) != 0 {
		t.Errorf("verdict %s with %d checks, want inconclusive and unchecked", res.Verdict, len(res.CheckResults))
	}
	for i, req := range llm.requests()[1:] {
		if got := lastUserMessage(req); got != completionReminder {
			t.Errorf("request %d: last user message = %q, want the completion reminder", i+2, got)
		}
	}
}

func TestRunMissingCompletionResetByToolCall(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	text := llmfake.Reply{Content: "thinking"}
	llm := newFakeLLM(t, llmfake.Script(text, text,
		llmfake.Tools(llmfake.ToolCall("list_dir", map[string]any{})),
		text, text,
		llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{"verdict": "inconclusive", "confidence": 0.5, "reasoning": "not enough context", "evidence": []any{}})),
	))
	res, err := Run(context.Background(), llm.model(), sampleTask(root), fastConfig())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.StopReason != StopInconclusive || res.Rounds != 6 {
		t.Fatalf("stop %s after %d rounds, want the submitted inconclusive verdict after 6", res.StopReason, res.Rounds)
	}
}

func TestRunMalformedToolArguments(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	llm := newFakeLLM(t, llmfake.Script(
		llmfake.Tools(
			llmfake.ToolCall("read_file", `{"path": "README.md"`),
			llmfake.ToolCall("read_file", map[string]any{"path": 12}),
			llmfake.ToolCall("grep", map[string]any{"pattern": "x", "glob": "*.go"}),
			llmfake.ToolCall("exec_shell", map[string]any{"cmd": "cat /etc/passwd"}),
			llmfake.ToolCall("read_file", `[1, 2]`),
		),
		llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{"verdict": "confirmed", "confidence": "high", "reasoning": "x", "evidence": []any{}})),
		llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{"verdict": "confirmed", "confidence": 0.7, "reasoning": "x", "evidence": []any{}})),
		llmfake.Tools(llmfake.ToolCall("submit_verdict", confirmArgs())),
	))
	res, err := Run(context.Background(), llm.model(), sampleTask(root), fastConfig())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	reqs := llm.requests()
	if len(reqs) != 4 {
		t.Fatalf("server saw %d requests, want 4", len(reqs))
	}
	got := toolMessages(reqs[3])
	want := []string{
		"error: read_file arguments are not valid JSON",
		"error: read_file arguments: path must be a string, not number",
		`error: grep arguments: unknown field "glob"`,
		`error: unknown tool "exec_shell"`,
		"error: read_file arguments must be a JSON object, not array",
		"error: submit_verdict arguments: confidence must be a number, not string",
		"error: submit_verdict was not accepted:\n- a confirmed verdict needs at least one required evidence item",
	}
	if len(got) != len(want) {
		t.Fatalf("tool messages = %q", got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("tool message %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
	// The file was never read in this run, so the tool_fact item fails
	// while the file checks pass.
	if res.StopReason != StopAcceptCheckFailed || len(res.CheckResults) != 3 {
		t.Fatalf("stop %s with %d checks, want accept_check_failed with 3", res.StopReason, len(res.CheckResults))
	}
	for i, wantPass := range []bool{true, true, false} {
		if res.CheckResults[i].Passed != wantPass {
			t.Errorf("check %d (%s) passed = %v, want %v: %s", i, res.CheckResults[i].Kind, res.CheckResults[i].Passed, wantPass, res.CheckResults[i].Detail)
		}
	}
}
