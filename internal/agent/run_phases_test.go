package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

func TestRunPhaseTransitions(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	read := func(path string, start, end int) llmfake.Reply {
		return llmfake.Tools(llmfake.ToolCall("read_file", map[string]any{"path": path, "start_line": start, "end_line": end}))
	}
	const cited = "internal/auth/session.go"
	llm := newFakeLLM(t, llmfake.Script(
		read(cited, 1, 10),  // 1: new file
		read(cited, 11, 14), // 2: nothing new
		read(cited, 15, 18), // 3: nothing new → explore → verify
		read(cited, 9, 12),  // 4: nothing new
		read(cited, 1, 5),   // 5: nothing new → verify → summarize
		llmfake.Tools(llmfake.ToolCall("submit_verdict", confirmArgs())),
	))
	cfg := fastConfig()
	cfg.ConvergenceRounds = 2
	res, err := Run(context.Background(), llm.model(), sampleTask(root), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []PhaseChange{
		{From: PhaseExplore, To: PhaseVerify, Round: 3, Reason: "cited file read and exploration saturated"},
		{From: PhaseVerify, To: PhaseSummarize, Round: 5, Reason: "verification saturated"},
	}
	if len(res.Phases) != len(want) {
		t.Fatalf("phases = %+v, want %+v", res.Phases, want)
	}
	for i := range want {
		if res.Phases[i] != want[i] {
			t.Errorf("phase change %d = %+v, want %+v", i, res.Phases[i], want[i])
		}
	}
	reqs := llm.requests()
	if got := lastUserMessage(reqs[3]); !strings.Contains(got, "[phase verify · round 3 of 22") || !strings.Contains(got, "verify the specific claim") {
		t.Errorf("request 4 nudge = %q, want the verify transition", got)
	}
	if got := lastUserMessage(reqs[5]); !strings.Contains(got, "[phase summarize") || !strings.Contains(got, "Stop exploring") {
		t.Errorf("request 6 nudge = %q, want the summarize transition", got)
	}
	if res.StopReason != StopAccepted {
		t.Errorf("stop %s, want accepted", res.StopReason)
	}
}

func TestRunSearchBudget(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	llm := newFakeLLM(t, llmfake.Script(
		llmfake.Tools(llmfake.ToolCall("grep", map[string]any{"pattern": "Lookup"}), llmfake.ToolCall("find_symbol", map[string]any{"name": "Touch"})),
		llmfake.Tools(llmfake.ToolCall("list_dir", map[string]any{"path": "internal"})),
		llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{"verdict": "inconclusive", "confidence": 0.5, "reasoning": "budget", "evidence": []any{}})),
	))
	cfg := fastConfig()
	cfg.SearchBudget = 2
	res, err := Run(context.Background(), llm.model(), sampleTask(root), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	msgs := toolMessages(llm.requests()[2])
	if !strings.Contains(msgs[0], "internal/auth/session.go:9: func (s *Store) Lookup(id string) *Session {") ||
		strings.Contains(msgs[0], "node_modules") || strings.Contains(msgs[0], "vendor/") {
		t.Errorf("grep result = %q, want the Go definition and no noise directories", msgs[0])
	}
	if !strings.Contains(msgs[1], "internal/auth/session.go:15: func (s *Store) Touch(id string) {") {
		t.Errorf("find_symbol result = %q", msgs[1])
	}
	if !strings.HasPrefix(msgs[2], "error: the search budget is spent (2 ") {
		t.Errorf("third search answered %q, want the budget refusal", msgs[2])
	}
	if len(res.Phases) != 1 || res.Phases[0].Reason != "search budget spent" || res.Phases[0].Round != 1 {
		t.Errorf("phases = %+v, want explore → verify in round 1 on the search budget", res.Phases)
	}
}
