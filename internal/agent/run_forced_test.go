package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// mustJSON encodes v.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %v: %v", v, err)
	}
	return string(b)
}

// checkForcedRequests checks, on the request bodies as sent, that the
// first budget requests offer every tool with no tool_choice and the rest
// send tool_choice "none" with only submit_verdict listed. No request
// carries a response format: the tests using it set no summary schema.
func checkForcedRequests(t *testing.T, llm *fakeLLM, budget int) {
	t.Helper()
	checkSummaryFormat(t, llm, budget, "", nil)
	raws := llm.rawRequests(t)
	if len(raws) <= budget {
		t.Fatalf("client sent %d requests, want more than the budget of %d", len(raws), budget)
	}
	for i, raw := range raws {
		if i < budget {
			if len(raw.Tools) != 5 || raw.ToolChoice != nil {
				t.Errorf("request %d: %d tools, tool_choice %s; want all 5 tools and no tool_choice", i+1, len(raw.Tools), raw.ToolChoice)
			}
			continue
		}
		if string(raw.ToolChoice) != `"none"` {
			t.Errorf("request %d: tool_choice %s, want \"none\"", i+1, raw.ToolChoice)
		}
		if len(raw.Tools) != 1 || raw.Tools[0].Function.Name != toolSubmitVerdict {
			t.Errorf("request %d lists %d tools, want submit_verdict alone", i+1, len(raw.Tools))
		}
	}
}

func TestRunBudgetExhaustedAfterForcedSummarize(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	files := []string{"README.md", "internal/auth/handler.go", "internal/auth/session.json", "internal/auth/session.go", "README.md"}
	llm := newFakeLLM(t, indexed(func(n int) llmfake.Reply {
		// The endpoint ignores tool_choice and the model keeps reading.
		return llmfake.Tools(llmfake.ToolCall("read_file", map[string]any{"path": files[n%len(files)]}))
	}))
	cfg := fastConfig()
	cfg.MaxRounds = 3
	cfg.GracefulExitRounds = 2
	res, err := Run(context.Background(), llm.model(), sampleTask(root), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.StopReason != StopBudgetExhausted || res.Rounds != 5 {
		t.Fatalf("stop %s after %d rounds, want budget_exhausted after 3+2", res.StopReason, res.Rounds)
	}
	checkForcedRequests(t, llm, 3)
	reqs := llm.requests()
	if got := lastUserMessage(reqs[3]); !strings.Contains(got, "round budget is spent") || !strings.Contains(got, `"evidence": [{"kind"`) {
		t.Errorf("4th request lacks the forced summarize nudge asking for JSON: %q", got)
	}
	if got := toolMessages(reqs[4]); !strings.Contains(got[len(got)-1], "the tools are closed") {
		t.Errorf("read during forced summarize answered %q", got[len(got)-1])
	}
	if got := lastUserMessage(reqs[4]); got != textVerdictReminder {
		t.Errorf("5th request's last user message = %q, want the text verdict reminder", got)
	}
	last := res.Phases[len(res.Phases)-1]
	if last.To != PhaseSummarize || last.Round != 3 || last.Reason != "round budget spent" {
		t.Errorf("last phase change = %+v, want → summarize in round 3", last)
	}
}

// Text replies without a verdict in the forced rounds are answered with a
// reminder and do not end the run as missing completion signals: the hard
// stop comes GracefulExitRounds rounds after the budget.
func TestRunForcedTextWithoutVerdict(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	llm := newFakeLLM(t, llmfake.Script(
		llmfake.Tools(llmfake.ToolCall("read_file", map[string]any{"path": "README.md"})),
		llmfake.Text("Let me think about it."),
		llmfake.Text("The finding looks real to me."),
		llmfake.Text("Verdict: confirmed, {as said}."),
	))
	cfg := fastConfig()
	cfg.MaxRounds = 2
	cfg.GracefulExitRounds = 2
	cfg.MaxMissingCompletion = 2
	res, err := Run(context.Background(), llm.model(), sampleTask(root), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.StopReason != StopBudgetExhausted || res.Rounds != 4 {
		t.Fatalf("stop %s after %d rounds, want budget_exhausted after 2+2", res.StopReason, res.Rounds)
	}
	checkForcedRequests(t, llm, 2)
	reqs := llm.requests()
	if got := lastUserMessage(reqs[3]); got != textVerdictReminder {
		t.Errorf("4th request's last user message = %q, want the text verdict reminder", got)
	}
	if n := strings.Count(llm.allBodies(t), "contained no verdict"); n != 1 {
		t.Errorf("the reminder was sent %d times, want once (the last reply is never answered)", n)
	}
}

func TestRunForcedTextVerdictAccepted(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	invalid := confirmArgs()
	delete(invalid, "confidence")
	llm := newFakeLLM(t, llmfake.Script(
		llmfake.Tools(llmfake.ToolCall("read_file", map[string]any{"path": "internal/auth/session.go"})),
		llmfake.Tools(llmfake.ToolCall("list_dir", map[string]any{"path": "internal/auth"})),
		llmfake.Text("My verdict: "+mustJSON(t, invalid)),
		llmfake.Text("Corrected, as asked:\n\n```json\n"+mustJSON(t, confirmArgs())+"\n```\nThe nil session is real."),
	))
	cfg := fastConfig()
	cfg.MaxRounds = 2
	res, err := Run(context.Background(), llm.model(), sampleTask(root), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.StopReason != StopAccepted || res.Rounds != 4 {
		t.Fatalf("stop %s after %d rounds, want accepted in round 4; checks %+v", res.StopReason, res.Rounds, res.CheckResults)
	}
	if res.Verdict != review.VerdictConfirmed || res.Confidence != 0.9 || !strings.HasPrefix(res.Reasoning, "Lookup returns nil") {
		t.Errorf("verdict = %s %.2f %q, want the confirmed verdict of the text", res.Verdict, res.Confidence, res.Reasoning)
	}
	if len(res.CheckResults) != 3 {
		t.Fatalf("got %d check results, want 3", len(res.CheckResults))
	}
	for _, c := range res.CheckResults {
		if !c.Passed {
			t.Errorf("check %s failed: %s", c.Kind, c.Detail)
		}
	}
	if res.ToolCalls[toolSubmitVerdict] != 0 {
		t.Errorf("tool calls = %v, want no submit_verdict call", res.ToolCalls)
	}
	checkForcedRequests(t, llm, 2)
	if got := lastUserMessage(llm.requests()[3]); !strings.Contains(got, "could not be used:\n- confidence is missing") {
		t.Errorf("the invalid text verdict was answered %q, want its problem named", got)
	}
}

func TestRunForcedTextVerdictFailsAcceptGate(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	args := confirmArgs()
	args["evidence"] = []map[string]any{
		{"kind": "content_contains", "path": "internal/auth/session.go", "start_line": 15, "end_line": 18,
			"match": "if sess == nil { return }"},
	}
	llm := newFakeLLM(t, llmfake.Script(
		llmfake.Tools(llmfake.ToolCall("read_file", map[string]any{"path": "internal/auth/session.go"})),
		llmfake.Text("Here is the verdict you asked for. "+mustJSON(t, args)+" I am fairly sure."),
	))
	cfg := fastConfig()
	cfg.MaxRounds = 1
	res, err := Run(context.Background(), llm.model(), sampleTask(root), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.StopReason != StopAcceptCheckFailed || res.Rounds != 2 {
		t.Fatalf("stop %s after %d rounds, want accept_check_failed in round 2", res.StopReason, res.Rounds)
	}
	if res.Verdict != review.VerdictConfirmed || res.Confidence != 0.45 {
		t.Errorf("verdict = %s %.3f, want confirmed at 0.9 × 0.5", res.Verdict, res.Confidence)
	}
	if len(res.CheckResults) != 1 || res.CheckResults[0].Passed ||
		!strings.Contains(res.CheckResults[0].Detail, "not found in internal/auth/session.go lines 15-18") {
		t.Errorf("check results = %+v, want the invented quote not found", res.CheckResults)
	}
	checkForcedRequests(t, llm, 1)
}

func TestRunVerdictDuringGracefulExitGoesThroughGate(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	bad := confirmArgs()
	bad["evidence"] = []map[string]any{{"kind": "content_contains", "path": "internal/auth/session.go", "match": "mutex.Lock()"}}
	llm := newFakeLLM(t, indexed(func(n int) llmfake.Reply {
		if n < 2 {
			return llmfake.Tools(llmfake.ToolCall("list_dir", map[string]any{"path": []string{"internal", "internal/auth"}[n]}))
		}
		// The endpoint ignores tool_choice "none": the call still counts.
		return llmfake.Tools(llmfake.ToolCall("submit_verdict", bad))
	}))
	cfg := fastConfig()
	cfg.MaxRounds = 2
	res, err := Run(context.Background(), llm.model(), sampleTask(root), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.StopReason != StopAcceptCheckFailed || res.Rounds != 3 {
		t.Fatalf("stop %s after %d rounds, want accept_check_failed in round 3", res.StopReason, res.Rounds)
	}
	if res.ToolCalls[toolSubmitVerdict] != 1 {
		t.Errorf("tool calls = %v, want one submit_verdict", res.ToolCalls)
	}
	checkForcedRequests(t, llm, 2)
}
