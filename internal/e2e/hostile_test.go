package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
)

// hostileExpert plays the expert's side from the tools' own JSON schemas:
// each round it generates arguments for one offered tool, swaps in a
// hostile path, and now and then replies with no tool call at all.
func hostileExpert(secretPath string) llmfake.Handler {
	hostile := []string{"../../../../../../etc/passwd", "/etc/passwd", "/proc/self/environ", "leak", "..", secretPath, "leakdir/secret.txt"}
	return func(ctx context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		if len(req.Tools) == 0 {
			return demo.Handler(ctx, req)
		}
		round := 0
		for _, m := range req.Messages {
			if m.Role == openai.ChatMessageRoleAssistant {
				round++
			}
		}
		if round%5 == 4 {
			return llmfake.Text("I have no tool call for you this time.")
		}
		tool := req.Tools[round%len(req.Tools)]
		params, _ := json.Marshal(tool.Function.Parameters)
		v, err := llmfake.Generate(params)
		if err != nil {
			return llmfake.Fail(500, err.Error())
		}
		args, _ := v.(map[string]any)
		if args == nil {
			args = map[string]any{}
		}
		for _, k := range []string{"path", "path_glob"} {
			if _, ok := args[k]; ok {
				args[k] = hostile[round%len(hostile)]
			}
		}
		if round%7 == 6 {
			return llmfake.Tools(openai.ToolCall{ID: "garbage", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: tool.Function.Name, Arguments: "{\"path\": [1,2"}})
		}
		return llmfake.Tools(llmfake.ToolCall(tool.Function.Name, args))
	}
}

func TestHostileExpertConversationsStayInsideTheRepository(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	secret := "reviewfleet-outside-secret-7f3a"
	secretPath := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secretPath, []byte(secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	passwd, _ := os.ReadFile("/etc/passwd")
	firstPasswd := strings.SplitN(string(passwd), "\n", 2)[0]

	f := newFleet(t, hostileExpert(secretPath), nil)
	r0, err := demo.WriteRepo(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Add symlinks leaving the repository to the head commit.
	for name, target := range map[string]string{"leak": secretPath, "leakdir": outside} {
		if err := os.Symlink(target, filepath.Join(r0.Dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "commit", "-qam", "links")
	cmd.Dir = r0.Dir
	if out, err := exec.Command("git", "-C", r0.Dir, "add", "-A").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	r := f.review(t, submit.Request{Origin: submit.FromOperator, Repo: r0.Dir, Base: "HEAD~2", Head: "HEAD"})
	if r.Status != review.ReviewDone {
		t.Fatalf("status %s: %s", r.Status, r.Error)
	}
	ctx := context.Background()
	runs, err := f.sub.Store.ListExpertRuns(ctx, r.ID)
	if err != nil || len(runs) == 0 {
		t.Fatalf("expert runs: %v %v", runs, err)
	}
	for id, run := range runs {
		t.Logf("finding %d: %s after %d rounds, tools %s", id, run.StopReason, run.Rounds, run.ToolCalls)
		if run.StopReason == "" {
			t.Errorf("expert run of finding %d has no stop reason", id)
		}
	}
	calls, err := f.sub.Store.ListLLMCalls(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, c := range calls {
		body := string(c.Request)
		sent++
		if strings.Contains(body, secret) {
			t.Fatalf("a request to the model carries the outside secret (stage %s)", c.Stage)
		}
		if firstPasswd != "" && strings.Contains(body, firstPasswd) {
			t.Fatalf("a request to the model carries /etc/passwd (stage %s)", c.Stage)
		}
		if strings.Contains(body, "PATH=/") || strings.Contains(body, "HOME=/") {
			t.Fatalf("a request to the model carries an environment (stage %s)", c.Stage)
		}
	}
	if sent == 0 {
		t.Fatal("no recorded requests to inspect")
	}
}
