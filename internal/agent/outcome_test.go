package agent

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

// TestToolCallsAreRecordedWithOutcomes runs two replies of tool calls of
// every kind and checks the outcome each gets in the run's record: content
// is a hit, a search that finds nothing is empty, a policy refusal is
// refused, a bad call is an error, a slow one a timeout, and a call past
// the per-reply cap is refused without running.
func TestToolCallsAreRecordedWithOutcomes(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	writeFiles(t, root, map[string]string{".env": "TOKEN=x\n", "empty.txt": ""})
	type want struct {
		name    string
		args    map[string]any
		outcome ToolOutcome
	}
	first := []want{
		{toolGrep, map[string]any{"pattern": `sess\.Expires`, "path_glob": "internal/auth/session.go"}, OutcomeHit},
		{toolGrep, map[string]any{"pattern": `func handle`, "path_glob": "**/*.go"}, OutcomeHit},
		{toolGrep, map[string]any{"pattern": `no such text anywhere`}, OutcomeEmpty},
		{toolFindSymbol, map[string]any{"name": "Lookup"}, OutcomeHit},
		{toolFindSymbol, map[string]any{"name": "Missing"}, OutcomeEmpty},
		{toolReadFile, map[string]any{"path": "empty.txt"}, OutcomeEmpty},
		{toolReadFile, map[string]any{"path": ".env"}, OutcomeRefused},
		{toolReadFile, map[string]any{"path": "../outside"}, OutcomeRefused},
		{toolReadFile, map[string]any{"path": "README.md"}, OutcomeRefused}, // the ninth call of the reply
	}
	second := []want{
		{toolReadFile, map[string]any{"path": "internal/auth/nothere.go"}, OutcomeError},
		{toolGrep, map[string]any{"pattern": `(`}, OutcomeError},
		{"shell", map[string]any{"cmd": "ls"}, OutcomeError},
		{toolListDir, map[string]any{"path": "internal"}, OutcomeHit},
		{toolReadFile, map[string]any{"path": "README.md"}, OutcomeTimeout},
	}
	reply := func(ws []want) llmfake.Reply {
		var calls []openai.ToolCall
		for _, w := range ws {
			calls = append(calls, llmfake.ToolCall(w.name, w.args))
		}
		return llmfake.Tools(calls...)
	}
	fake := newFakeLLM(t, llmfake.Script(reply(first), reply(second), llmfake.Tools(llmfake.ToolCall(toolSubmitVerdict, map[string]any{
		"verdict": "refuted", "confidence": 0.4, "reasoning": "r",
		"evidence": []map[string]any{{"kind": "file_exists", "path": "README.md", "required": true}},
	}))))
	cfg := fastConfig()
	cfg.ReadTimeout = 20 * time.Millisecond
	reads := 0 // written only from the Run goroutine
	cfg.toolHook = func(ctx context.Context, tool string, _ time.Duration) error {
		if tool != toolReadFile {
			return nil
		}
		if reads++; reads == 5 { // the last read of the second reply never finishes in time
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	res, err := Run(context.Background(), fake.model(), sampleTask(root), cfg)
	if err != nil {
		t.Fatal(err)
	}
	all := append(append([]want{}, first...), second...)
	if len(res.Calls) != len(all) {
		t.Fatalf("recorded %d calls, want %d: %+v", len(res.Calls), len(all), res.Calls)
	}
	for i, w := range all {
		c := res.Calls[i]
		round := 1
		if i >= len(first) {
			round = 2
		}
		if c.Tool != w.name || c.Outcome != w.outcome || c.Seq != i+1 || c.Round != round {
			t.Errorf("call %d = %s %s (round %d, seq %d), want %s %s (round %d, seq %d)", i+1, c.Tool, c.Outcome, c.Round, c.Seq, w.name, w.outcome, round, i+1)
		}
		if (c.Outcome == OutcomeHit) != (c.ResultBytes > 0) && c.Outcome != OutcomeEmpty {
			t.Errorf("call %d (%s): result bytes %d", i+1, c.Outcome, c.ResultBytes)
		}
		if c.Args == "" || len(c.Args) > MaxToolArgs {
			t.Errorf("call %d: args %q", i+1, c.Args)
		}
	}
	if got := res.Calls[0].Args; got != `{"path_glob":"internal/auth/session.go","pattern":"sess\\.Expires"}` {
		t.Errorf("recorded args = %s", got)
	}
	counts := OutcomeCounts(res.Calls)
	if counts["grep"]["hit"] != 2 || counts["grep"]["empty"] != 1 || counts["grep"]["error"] != 1 || counts["read_file"]["refused"] != 3 {
		t.Errorf("counts = %v", counts)
	}
	if _, ok := counts[toolSubmitVerdict]; ok {
		t.Errorf("submit_verdict recorded as a tool call: %v", counts)
	}
}

// TestRecordedArgsAreRedactedAndBounded: a secret the model passes in a
// pattern is not stored, and a long argument is cut.
func TestRecordedArgsAreRedactedAndBounded(t *testing.T) {
	t.Parallel()
	secret := "ghp_" + strings.Repeat("aB3dE5", 6)
	got := recordArgs(`{"pattern": "token = \"` + secret + `\""}`)
	if strings.Contains(got, secret) {
		t.Errorf("recorded args keep the secret: %s", got)
	}
	long := recordArgs(`{"pattern": "` + strings.Repeat("é", 400) + `"}`)
	if len(long) > MaxToolArgs || !strings.HasSuffix(long, "…") {
		t.Errorf("long args: %d bytes, %q", len(long), long[len(long)-10:])
	}
	// Garbled arguments (not JSON) and names keep no NUL byte or invalid
	// UTF-8, which Postgres text cannot hold.
	for _, s := range []string{recordArgs("{\"pattern\x00\xff"), recordTool("grep\x00\xfe" + strings.Repeat("x", 100))} {
		if strings.ContainsRune(s, 0) || !utf8.ValidString(s) || len(s) > MaxToolArgs {
			t.Errorf("stored text %q", s)
		}
	}
	if got := recordTool(strings.Repeat("ü", 50)); len(got) > 64 || !utf8.ValidString(got) {
		t.Errorf("long tool name stored as %q", got)
	}
}

// TestChangedFilesOnlySaysSo: in a snapshot that holds only the changed
// files, a search that finds nothing and a file that is not there say that
// the repository is not all there, and the outcomes stay empty and error.
func TestChangedFilesOnlySaysSo(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	fake := newFakeLLM(t, llmfake.Script(
		llmfake.Tools(
			llmfake.ToolCall(toolGrep, map[string]any{"pattern": "nowhere to be found"}),
			llmfake.ToolCall(toolReadFile, map[string]any{"path": "app/db.py"}),
			llmfake.ToolCall(toolGrep, map[string]any{"pattern": "func handle"}),
		),
		llmfake.Tools(llmfake.ToolCall(toolSubmitVerdict, map[string]any{
			"verdict": "inconclusive", "confidence": 0.4, "reasoning": "r",
			"evidence": []map[string]any{{"kind": "file_exists", "path": "README.md", "required": true}},
		}))))
	task := sampleTask(root)
	task.ChangedFilesOnly = true
	res, err := Run(context.Background(), fake.model(), task, fastConfig())
	if err != nil {
		t.Fatal(err)
	}
	msgs := toolMessages(fake.requests()[1])
	if len(msgs) != 3 {
		t.Fatalf("tool messages: %q", msgs)
	}
	for i, m := range msgs[:2] {
		if !strings.Contains(m, "holds only the files the change touched") {
			t.Errorf("message %d lacks the changed-files note: %q", i+1, m)
		}
	}
	if !strings.HasPrefix(msgs[1], "error: no such file or directory: app") {
		t.Errorf("missing file message = %q", msgs[1])
	}
	if strings.Contains(msgs[2], "holds only") || !strings.Contains(msgs[2], "internal/auth/handler.go:3") {
		t.Errorf("a hit carries the note or misses: %q", msgs[2])
	}
	if got := []ToolOutcome{res.Calls[0].Outcome, res.Calls[1].Outcome, res.Calls[2].Outcome}; got[0] != OutcomeEmpty || got[1] != OutcomeError || got[2] != OutcomeHit {
		t.Errorf("outcomes = %v", got)
	}
}
