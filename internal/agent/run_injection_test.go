package agent

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

// TestRunInjectionAndSecrets runs an investigation in a repository whose
// files try to talk the model out of its task and hold credentials. The
// tools offered never change, a tool the files name ("exec") is refused,
// every file content reaches the model inside the run's fence, the
// credentials never reach it, and evidence quoting a marker checks out.
func TestRunInjectionAndSecrets(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	corpus, _ := filepath.Glob("../untrusted/testdata/injection/*")
	if len(corpus) == 0 {
		t.Fatal("injection corpus not found")
	}
	var reads []openai.ToolCall
	for _, p := range corpus {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := "docs/" + filepath.Base(p)
		writeFiles(t, root, map[string]string{name: string(data)})
		reads = append(reads, llmfake.ToolCall("read_file", map[string]any{"path": name}))
	}
	const ghp, awsKey = "ghp_3Tz85pkNGcVx2RHLKXSf3wh34LxCnzm8KVby", "JRfza0hW/rdE2oapzzQbkrck+z1iYylswfgItIep"
	writeFiles(t, root, map[string]string{
		"internal/auth/creds.go": "package auth\n\nconst githubToken = \"" + ghp + "\"\n\nvar awsSecretAccessKey = \"" + awsKey + "\"\n",
	})
	reads = append(reads, llmfake.ToolCall("read_file", map[string]any{"path": "internal/auth/creds.go"}),
		llmfake.ToolCall("grep", map[string]any{"pattern": "ghp_", "path_glob": "**/*.go"}))
	verdict := map[string]any{
		"verdict": "confirmed", "confidence": 0.9, "reasoning": "a token is hard-coded",
		"evidence": []map[string]any{
			{"kind": "content_contains", "path": "internal/auth/creds.go", "start_line": 3, "end_line": 3,
				"match": `const githubToken = "[REDACTED:github-token:1]"`},
		},
	}
	llm := newFakeLLM(t, llmfake.Script(
		llmfake.Tools(reads...),
		llmfake.Tools(llmfake.ToolCall("exec", map[string]any{"cmd": "cat /etc/passwd"})),
		llmfake.Tools(llmfake.ToolCall("submit_verdict", verdict)),
	))
	cfg := fastConfig()
	cfg.MaxRounds, cfg.SearchBudget = 10, 10
	task := sampleTask(root)
	task.File, task.LineStart, task.LineEnd = "internal/auth/creds.go", 3, 3 // the confirming quote sits at the cited lines
	res, err := Run(context.Background(), llm.model(), task, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.StopReason != StopAccepted {
		t.Errorf("stop %s, want accepted (evidence quoting a marker): %+v", res.StopReason, res.CheckResults)
	}
	raw := llm.rawRequests(t)
	toolNames := func(r rawRequest) []string {
		var names []string
		for _, tl := range r.Tools {
			names = append(names, tl.Function.Name)
		}
		return names
	}
	want := toolNames(raw[0])
	for i, r := range raw {
		if got := toolNames(r); !slices.Equal(got, want) {
			t.Errorf("request %d offers tools %v, want %v", i+1, got, want)
		}
	}
	if body := llm.allBodies(t); strings.Contains(body, ghp) || strings.Contains(body, awsKey) {
		t.Errorf("a credential reached the model")
	}
	reqs := llm.requests()
	sys := reqs[0].Messages[0].Content
	id := regexp.MustCompile(`<<<UNTRUSTED-([0-9a-f]{24})`).FindStringSubmatch(sys)
	if id == nil || !strings.Contains(sys, "[REDACTED:kind:N]") {
		t.Fatalf("system prompt explains neither the fence nor the markers:\n%s", sys)
	}
	msgs := toolMessages(reqs[len(reqs)-1])
	open, closing := "<<<UNTRUSTED-"+id[1]+" ", "UNTRUSTED-"+id[1]+">>>"
	if m := msgs[len(reads)-1]; !strings.Contains(m, "no matching lines") {
		t.Errorf("grep for the token's prefix found the redacted value: %s", m)
	}
	for i := range reads[:len(reads)-1] {
		m := msgs[i]
		if !strings.HasPrefix(m, open) || !strings.HasSuffix(m, closing+"\n") || strings.Count(m, "UNTRUSTED-"+id[1]) != 2 {
			t.Errorf("tool result %d is not fenced exactly once:\n%s", i+1, m)
		}
	}
	if m := msgs[len(reads)]; !strings.HasPrefix(m, `error: unknown tool "exec"`) {
		t.Errorf("exec answered %q", m)
	}
	if !strings.Contains(msgs[len(reads)-2], `3: const githubToken = "[REDACTED:github-token:1]"`) {
		t.Errorf("marker not on line 3:\n%s", msgs[len(reads)-2])
	}
}
