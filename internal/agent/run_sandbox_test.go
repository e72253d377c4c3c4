package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

func TestRunSandboxAttacksLeakNothing(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	outside := t.TempDir()
	const secret = "TOPSECRET7f3a9c"
	writeFiles(t, outside, map[string]string{"secret.txt": "token=" + secret + "\n"})
	mustSymlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "docs", "leak.txt"))
	mustSymlink(t, outside, filepath.Join(root, "outside_dir"))
	mustSymlink(t, "/proc/self/environ", filepath.Join(root, "env"))
	mustSymlink(t, "../../../../../../../../../../etc/passwd", filepath.Join(root, "passwd"))
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A symlink inside the root is not followed either: it could name a
	// denied file.
	mustSymlink(t, filepath.Join(root, "README.md"), filepath.Join(root, "readme_link.md"))
	mustSymlink(t, ".env", filepath.Join(root, "notes.txt"))
	writeFiles(t, root, map[string]string{
		".env":              "API_TOKEN=" + secret + "\n",
		".git/config":       "[remote \"origin\"]\n\turl = https://x:" + secret + "@example.com/r.git\n",
		"deploy/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\n" + secret + "\n",
	})

	attacks := []struct {
		call string
		args map[string]any
		want string
	}{
		{"read_file", map[string]any{"path": "../../etc/passwd"}, "error: path escapes the repository root"},
		{"read_file", map[string]any{"path": "/etc/passwd"}, "error: absolute paths are refused"},
		{"read_file", map[string]any{"path": "/proc/self/environ"}, "error: absolute paths are refused"},
		{"read_file", map[string]any{"path": "docs/leak.txt"}, "error: docs/leak.txt is a symbolic link: the sandbox does not follow links"},
		{"read_file", map[string]any{"path": "outside_dir/secret.txt"}, "error: outside_dir is a symbolic link: the sandbox does not follow links"},
		{"read_file", map[string]any{"path": "env"}, "error: env is a symbolic link: the sandbox does not follow links"},
		{"read_file", map[string]any{"path": "passwd"}, "error: passwd is a symbolic link: the sandbox does not follow links"},
		{"read_file", map[string]any{"path": "internal/../../" + filepath.Base(outside) + "/secret.txt"}, "error: path escapes the repository root"},
		{"read_file", map[string]any{"path": "pipe"}, "error: pipe is not a regular file"},
		{"list_dir", map[string]any{"path": ".."}, "error: path escapes the repository root"},
		{"list_dir", map[string]any{"path": "outside_dir"}, "error: outside_dir is a symbolic link: the sandbox does not follow links"},
		{"grep", map[string]any{"pattern": secret, "path_glob": "../**"}, "error: path_glob must not contain .."},
		{"grep", map[string]any{"pattern": "token=", "path_glob": "/tmp/**"}, "error: path_glob must be relative"},
		{"grep", map[string]any{"pattern": "token=|root:"}, "no matching lines found"},
		{"find_symbol", map[string]any{"name": "../../etc"}, "error: find_symbol needs an identifier"},
		{"read_file", map[string]any{"path": "readme_link.md"}, "error: readme_link.md is a symbolic link: the sandbox does not follow links"},
		{"read_file", map[string]any{"path": "notes.txt"}, "error: notes.txt is a symbolic link: the sandbox does not follow links"},
		{"read_file", map[string]any{"path": ".env"}, "error: .env: denied by sandbox policy"},
		{"read_file", map[string]any{"path": "./internal/../.git/config"}, "error: .git/config: denied by sandbox policy"},
		{"read_file", map[string]any{"path": "deploy/id_ed25519"}, "error: deploy/id_ed25519: denied by sandbox policy"},
		{"list_dir", map[string]any{"path": ".git"}, "error: .git: denied by sandbox policy"},
		{"grep", map[string]any{"pattern": secret, "path_glob": "**"}, "no matching lines found"},
		{"grep", map[string]any{"pattern": "url =", "path_glob": ".git/**"}, "no matching lines found"},
	}
	var replies []llmfake.Reply
	for _, a := range attacks {
		replies = append(replies, llmfake.Tools(llmfake.ToolCall(a.call, a.args)))
	}
	replies = append(replies, llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{
		"verdict": "confirmed", "confidence": 0.9, "reasoning": "quoting the secret",
		"evidence": []map[string]any{
			{"kind": "content_contains", "path": "docs/leak.txt", "match": secret},
			{"kind": "file_exists", "path": "/etc/passwd"},
		},
	})))
	replies = append(replies, llmfake.Reply{Content: "done"})
	llm := newFakeLLM(t, llmfake.Script(replies...))
	cfg := fastConfig()
	cfg.MaxRounds = 40
	cfg.SearchBudget = 40
	res, err := Run(context.Background(), llm.model(), sampleTask(root), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	reqs := llm.requests()
	got := toolMessages(reqs[len(reqs)-1])
	if len(got) < len(attacks) {
		t.Fatalf("got %d tool messages, want %d", len(got), len(attacks))
	}
	for i, a := range attacks {
		if !strings.Contains(got[i], a.want) {
			t.Errorf("%s %v answered %q, want %q", a.call, a.args, got[i], a.want)
		}
	}
	if res.StopReason != StopAcceptCheckFailed {
		t.Errorf("stop %s, want accept_check_failed for evidence outside the root", res.StopReason)
	}
	for _, c := range res.CheckResults {
		if c.Passed || strings.Contains(c.Detail, secret) {
			t.Errorf("check %+v passed or leaked", c)
		}
	}

	// Nothing from outside the root may appear in any request.
	bodies := llm.allBodies(t)
	forbidden := []string{"token=" + secret, "API_TOKEN=" + secret, "x:" + secret, outside}
	if data, err := os.ReadFile("/etc/passwd"); err == nil {
		if line, _, _ := strings.Cut(string(data), "\n"); len(line) > 8 {
			forbidden = append(forbidden, line)
		}
	}
	if p := os.Getenv("PATH"); p != "" {
		forbidden = append(forbidden, "PATH="+p)
	}
	for _, f := range forbidden {
		if strings.Contains(bodies, f) {
			t.Errorf("a request body contains outside content %q", f)
		}
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestRunToolTimeoutBackoff(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	grep := func(pattern, glob string) llmfake.Reply {
		return llmfake.Tools(llmfake.ToolCall("grep", map[string]any{"pattern": pattern, "path_glob": glob}))
	}
	llm := newFakeLLM(t, llmfake.Script(
		grep("Lookup", "internal/**"),
		grep("Touch", "internal/**"), // a new keyword keeps the scope's backoff
		grep("Store", "./internal/**"),
		grep("Expires", "internal/**"),
		grep("Lookup", "**/*.go"), // another scope starts fresh
		llmfake.Tools(llmfake.ToolCall("read_file", map[string]any{"path": "README.md"})),
		llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{"verdict": "inconclusive", "confidence": 0.3, "reasoning": "searches timed out", "evidence": []any{}})),
	))
	cfg := fastConfig()
	cfg.ReadTimeout = 15 * time.Millisecond
	cfg.ScanTimeout = 20 * time.Millisecond
	cfg.MaxToolTimeout = 80 * time.Millisecond
	type seen struct {
		tool   string
		budget time.Duration
	}
	var budgets []seen // written only from the Run goroutine
	cfg.toolHook = func(ctx context.Context, tool string, budget time.Duration) error {
		budgets = append(budgets, seen{tool, budget})
		if tool != "grep" {
			return nil
		}
		<-ctx.Done() // a grep that never finishes in time
		return ctx.Err()
	}
	res, err := Run(context.Background(), llm.model(), sampleTask(root), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	ms := time.Millisecond
	want := []seen{{"grep", 20 * ms}, {"grep", 40 * ms}, {"grep", 80 * ms}, {"grep", 80 * ms}, {"grep", 20 * ms}, {"read_file", 15 * ms}}
	if len(budgets) != len(want) {
		t.Fatalf("budgets = %v, want %v", budgets, want)
	}
	for i := range want {
		if budgets[i] != want[i] {
			t.Errorf("call %d: budget %v, want %v", i+1, budgets[i], want[i])
		}
	}
	msgs := toolMessages(llm.requests()[6])
	if !strings.HasPrefix(msgs[0], "error: grep timed out after 20ms; the next call with the same scope gets 40ms. Narrow it") {
		t.Errorf("timeout message = %q", msgs[0])
	}
	if !strings.Contains(msgs[3], "timed out after 80ms; the next call with the same scope gets 80ms") {
		t.Errorf("capped timeout message = %q", msgs[3])
	}
	if res.StopReason != StopInconclusive {
		t.Errorf("stop %s, want the submitted inconclusive verdict", res.StopReason)
	}
}
