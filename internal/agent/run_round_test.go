package agent

import (
	"context"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

// Seed 001, completion protocol: replies that carry only thinking do not
// count toward missing_completion_signal.
func TestReasoningOnlyRepliesAreNotMissingCompletions(t *testing.T) {
	t.Parallel()
	think := llmfake.Reply{Reasoning: "let me look at the callers first"}
	inline := llmfake.Text("<think>the guard may be in the caller</think>")
	llm := newFakeLLM(t, llmfake.Script(think, inline, think, think, llmfake.Tools(llmfake.ToolCall("submit_verdict",
		map[string]any{"verdict": "inconclusive", "confidence": 0.4, "reasoning": "not settled", "evidence": []any{}}))))
	cfg := fastConfig()
	cfg.MaxMissingCompletion = 2
	res, err := Run(context.Background(), llm.model(), sampleTask(root(t)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopInconclusive {
		t.Fatalf("stop %s after %d rounds, want the submitted inconclusive verdict: thinking is not a missing completion", res.StopReason, res.Rounds)
	}
}

// Issue 11 point 5: a reply asking for more tool calls than the cap gets
// the excess answered with a tool error the model can read; every call id
// is answered.
func TestToolCallsPerRoundAreCapped(t *testing.T) {
	t.Parallel()
	var calls []openai.ToolCall
	for i := 0; i < 12; i++ {
		calls = append(calls, llmfake.ToolCall("list_dir", map[string]any{"path": "."}))
	}
	llm := newFakeLLM(t, llmfake.Script(llmfake.Tools(calls...), llmfake.Tools(llmfake.ToolCall("submit_verdict",
		map[string]any{"verdict": "inconclusive", "confidence": 0.4, "reasoning": "not settled", "evidence": []any{}}))))
	cfg := fastConfig()
	cfg.MaxToolCallsPerRound, cfg.SearchBudget = 5, 50
	res, err := Run(context.Background(), llm.model(), sampleTask(root(t)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n := res.ToolCalls["list_dir"]; n != 5 {
		t.Errorf("%d list_dir calls run, want the cap of 5", n)
	}
	refused, answered := 0, 0
	for _, m := range llm.requests()[1].Messages {
		if m.Role != openai.ChatMessageRoleTool {
			continue
		}
		answered++
		if strings.Contains(m.Content, "at most 5 tool calls are run per reply") {
			refused++
		}
	}
	if answered != 12 || refused != 7 {
		t.Errorf("%d tool messages, %d refused; want 12 and 7", answered, refused)
	}
}

func root(t *testing.T) string { t.Helper(); return sampleRepo(t) }
