package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
)

// Credentials of the reviewed repository; none may reach the model or the
// database.
var reviewedSecrets = map[string]string{
	"aws access key id":     "AKIA5XRILAV5FVCYK43K",
	"aws secret access key": "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",
	"github token":          "ghp_3Tz85pkNGcVx2RHLKXSf3wh34LxCnzm8KVby",
	"db password":           "3JVkHQ2w81rmkRvQ",
	"api token":             "bVp2fmaWzTaUEb23TRdVU1mtZ2PtIeBJ",
}

// secretRepo commits a change that adds hard-coded credentials: the AWS
// secret sits on line 6 of config/aws.go. The commit message carries the
// GitHub token too.
func secretRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	write := func(rel, s string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := reviewedSecrets
	write("config/aws.go", "package config\n\n// Region is where the bucket lives.\nconst Region = \"eu-west-1\"\n")
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	write("config/aws.go", "package config\n\n// Region is where the bucket lives.\nconst Region = \"eu-west-1\"\n\nconst awsSecretAccessKey = \""+s["aws secret access key"]+"\"\nconst awsAccessKeyID = \""+s["aws access key id"]+"\"\n")
	write("internal/gh/client.go", "package gh\n\nvar token = \""+s["github token"]+"\"\n\nfunc Token() string { return token }\n")
	write(".env", "DB_HOST=db\nDB_PASSWORD="+s["db password"]+"\nAPI_TOKEN="+s["api token"]+"\n")
	git("add", "-A")
	git("commit", "-q", "-m", "Talk to S3 and GitHub\n\nUses the token "+s["github token"]+" for now.")
	return dir
}

// secretModel reports the hard-coded AWS secret where intent shows its
// marker, confirms it in every later stage (the expert after reading the
// file and citing the marker as evidence), and keeps every request.
type secretModel struct {
	mu   sync.Mutex
	reqs []openai.ChatCompletionRequest
}

var (
	markerLine = regexp.MustCompile(`(?m)^\s*(\d+) \+ .*\[REDACTED:aws-secret:1\]`)
	location   = regexp.MustCompile(`Location: (\S+) lines (\d+)-`)
)

func (m *secretModel) handle(_ context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	switch llmfake.SchemaName(req) {
	case "reviewfleet_intent":
		hit := markerLine.FindStringSubmatch(llmfake.LastUser(req))
		if hit == nil {
			return llmfake.JSON(map[string]any{"findings": []any{}})
		}
		n, _ := strconv.Atoi(hit[1])
		return llmfake.JSON(map[string]any{"findings": []any{map[string]any{
			"file": "config/aws.go", "line_start": n, "line_end": n, "risk_type": "authorization",
			"description": "A hard-coded AWS secret access key is committed in the source.",
			"suggestion":  "Load the key from the environment or a secret store and rotate it.", "quote": "", "fix": "",
			"severity": "critical", "confidence": 0.95,
		}}})
	case "reviewfleet_verify":
		return llmfake.JSON(map[string]any{"evidence": "the marker stands on the cited line", "anchored": true, "adjusted_confidence": 0.95})
	case "reviewfleet_eval":
		return llmfake.JSON(map[string]any{"claim": "the key is in the source", "counter_evidence": "none", "verdict": "confirmed", "reason": "the marker is there", "final_confidence": 0.95})
	}
	if len(req.Tools) > 0 {
		loc := location.FindStringSubmatch(req.Messages[1].Content)
		if len(req.Messages) == 2 {
			return llmfake.Tools(llmfake.ToolCall("read_file", map[string]any{"path": loc[1]}))
		}
		n, _ := strconv.Atoi(loc[2])
		return llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{
			"verdict": "confirmed", "confidence": 0.95, "reasoning": "a secret is hard-coded",
			"evidence": []map[string]any{{"kind": "content_contains", "path": loc[1], "start_line": n, "end_line": n, "match": `const awsSecretAccessKey = "[REDACTED:aws-secret:1]"`, "required": true}},
		}))
	}
	return llmfake.FromSchema(req)
}

// TestSecretsNeverLeaveAndAreStillReported reviews a change with
// hard-coded credentials: no value reaches a request to the model, a
// review_files row or an llm_calls row, and the AWS secret is still
// reported, confirmed, at its line.
func TestSecretsNeverLeaveAndAreStillReported(t *testing.T) {
	t.Parallel()
	t.Run("repo", func(t *testing.T) {
		t.Parallel()
		checkSecretsReview(t, func(dir string) submit.Request {
			return submit.Request{Origin: submit.FromOperator, Repo: dir, Base: "HEAD~1", Head: "HEAD"}
		})
	})
	// A diff reviewed against its work tree: the expert reads the live
	// tree, which only its tools' redaction protects.
	t.Run("diff", func(t *testing.T) {
		t.Parallel()
		checkSecretsReview(t, func(dir string) submit.Request {
			out, err := exec.Command("git", "-C", dir, "format-patch", "-1", "--stdout", "HEAD").Output()
			if err != nil {
				t.Fatal(err)
			}
			patch := filepath.Join(t.TempDir(), "change.patch")
			if err := os.WriteFile(patch, out, 0o644); err != nil {
				t.Fatal(err)
			}
			return submit.Request{Origin: submit.FromOperator, Repo: dir, DiffFile: patch}
		})
	})
}

func checkSecretsReview(t *testing.T, request func(dir string) submit.Request) {
	model := &secretModel{}
	f := newFleet(t, model.handle, nil)
	r := f.review(t, request(secretRepo(t)))
	if r.Status != review.ReviewDone {
		t.Fatalf("status %s: %s", r.Status, r.Error)
	}
	ctx := context.Background()
	var where []string
	check := func(what, text string) {
		for name, v := range reviewedSecrets {
			if strings.Contains(text, v) {
				where = append(where, fmt.Sprintf("%s in %s", name, what))
			}
		}
	}
	model.mu.Lock()
	for i, req := range model.reqs {
		body, _ := json.Marshal(req)
		check(fmt.Sprintf("request %d to the model", i+1), string(body))
	}
	nreq := len(model.reqs)
	model.mu.Unlock()
	files, err := f.sub.Store.ListFiles(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var content string
	for _, fl := range files {
		check("review_files.diff of "+fl.Path, fl.Diff)
		if fl.Content != nil {
			check("review_files.content of "+fl.Path, *fl.Content)
			if fl.Path == "config/aws.go" {
				content = *fl.Content
			}
		}
	}
	check("reviews.purpose", r.Purpose)
	calls, err := f.sub.Store.ListLLMCalls(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		check("llm_calls.request", string(c.Request))
		check("llm_calls.response", string(c.Response))
	}
	for _, w := range where {
		t.Error(w)
	}
	t.Logf("%d requests, %d llm_calls rows, %d files checked", nreq, len(calls), len(files))

	if got := strings.Split(content, "\n")[5]; got != `const awsSecretAccessKey = "[REDACTED:aws-secret:1]"` {
		t.Errorf("line 6 of config/aws.go = %q", got)
	}
	findings, err := f.sub.Store.ListFindings(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	reported := false
	for _, fd := range findings {
		if fd.File == "config/aws.go" && fd.LineStart == 6 {
			reported = true
		}
	}
	if !reported {
		t.Errorf("the hard-coded secret is not reported at config/aws.go:6: %+v", findings)
	}
	runs, err := f.sub.Store.ListExpertRuns(ctx, r.ID)
	if err != nil || len(runs) == 0 {
		t.Fatalf("expert runs: %v %v", runs, err)
	}
	for id, run := range runs {
		if run.StopReason != "accepted" {
			t.Errorf("expert run of finding %d stopped with %s: evidence citing the marker did not check out (%s)", id, run.StopReason, run.Checks)
		}
	}
}
