package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/evaluation"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

// evalRepo builds a git repository whose head commit adds lines marked
// "BUG:" (where the markers reviewer reports findings) and writes a
// two-case dataset about it: one case reviews base..head, the other a
// patch file with contents read from the work tree.
func evalRepo(t *testing.T) (dataset string) {
	t.Helper()
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	write := func(name string, lines []string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(repo, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q")
	numbered := func(n int, marks map[int]string) []string {
		lines := make([]string, n)
		for i := range lines {
			lines[i] = fmt.Sprintf("var v%d = %d", i+1, i+1)
			if m, ok := marks[i+1]; ok {
				lines[i] += " // BUG: " + m
			}
		}
		lines[0] = "package p"
		return lines
	}
	write("a.go", numbered(3, nil))
	git("add", "-A")
	git("commit", "-qm", "base")
	// a.go: findings at 5 and 20; b.go (new): findings at 3 and 10.
	write("a.go", numbered(24, map[int]string{5: "overflow when v5 is max", 20: "division by zero in v20"}))
	write("b.go", numbered(12, map[int]string{3: "unchecked nil map in v3", 10: "leaked goroutine in v10"}))
	git("add", "a.go")
	git("commit", "-qm", "head")
	dataset = filepath.Join(root, "dataset")
	if err := os.MkdirAll(dataset, 0o755); err != nil {
		t.Fatal(err)
	}
	git("add", "-N", "b.go")
	if err := os.WriteFile(filepath.Join(dataset, "b.patch"), []byte(git("diff", "--", "b.go")), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"git-case.json": fmt.Sprintf(`{"name": "git-case", "repo": %q, "base": "HEAD~1", "head": "HEAD", "purpose": "add values",
			"golden": [{"file": "a.go", "line": 5, "text": "v5 overflows", "risk_type": "robustness"},
			           {"file": "a.go", "start_line": 12, "end_line": 12, "text": "v12 is never read", "risk_type": "intent"}]}`, repo),
		"diff-case.json": fmt.Sprintf(`{"name": "diff-case", "repo": %q, "diff": "b.patch", "purpose": "add b",
			"golden": [{"file": "b.go", "start_line": 4, "end_line": 6, "text": "nil map write"},
			           {"text": "a goroutine is started and never stopped", "severity": "medium"}]}`, repo),
	}
	for name, body := range cases {
		if err := os.WriteFile(filepath.Join(dataset, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dataset
}

type evalDoc struct {
	RunID  string `json:"run_id"`
	Totals struct {
		TP, FP, FN            int
		Golden                int
		Precision, Recall, F1 float64
		LLMCalls              int `json:"llm_calls"`
		JudgeCalls            int `json:"judge_calls"`
		RuntimeMS             int64
		PerRiskType           map[string]struct{ TP, FP, FN int } `json:"per_risk_type"`
	} `json:"totals"`
	Cases []struct {
		Name     string `json:"name"`
		ReviewID string `json:"review_id"`
		Error    string `json:"error"`
		TP, FP   int
		FN       int
	} `json:"cases"`
	Compare *struct {
		FPDown  bool `json:"fp_down"`
		FNNotUp bool `json:"fn_not_up"`
		Pass    bool `json:"pass"`
	} `json:"compare"`
	Ablation []struct {
		Toggle string
		Delta  struct{ TP, FP, FN int }
	} `json:"ablation"`
}

// judgingEnv points the commands at a migrated database and a markers
// reviewer whose judge always agrees, each reviewer reply after delay; it
// returns the commands' environment and the database's DSN.
func judgingEnv(t *testing.T, delay time.Duration) (testEnv, string) {
	t.Helper()
	marked := llmfake.Markers("")
	srv := llmfake.New(func(ctx context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		if llmfake.SchemaName(req) == "reviewfleet_judge" {
			return llmfake.JSON(map[string]any{"match": true, "reasoning": "same defect"})
		}
		time.Sleep(delay)
		return marked(ctx, req)
	})
	t.Cleanup(srv.Close)
	dsn := testenv.IsolatedSchema(t)
	env := testEnv{
		"DATABASE_URL": dsn, "OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k",
		"REVIEWFLEET_EXPERT_SNAPSHOT_DIR": t.TempDir(),
	}
	if _, _, err := runEnv(t, env, "migrate"); err != nil {
		t.Fatal(err)
	}
	return env, dsn
}

func TestEvalCountsMatchesAndComparesRuns(t *testing.T) {
	t.Parallel()
	env, dsn := judgingEnv(t, 0)
	dataset := evalRepo(t)

	out, stderr, err := runEnv(t, env, "eval", "--dataset", dataset, "--format", "json", "--quiet")
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr)
	}
	var first evalDoc
	if err := json.Unmarshal([]byte(out), &first); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// Window only: a.go:5 and b.go:3 (one line from 4-6) match; a.go:20
	// and b.go:10 are false positives; a.go:12 and the text-only issue are
	// missed.
	tt := first.Totals
	if tt.TP != 2 || tt.FP != 2 || tt.FN != 2 || tt.Golden != 4 || tt.Precision != 0.5 || tt.Recall != 0.5 || tt.F1 != 0.5 {
		t.Fatalf("totals %+v\n%s", tt, out)
	}
	if tt.LLMCalls == 0 || tt.JudgeCalls != 0 || first.RunID == "" || len(first.Cases) != 2 {
		t.Fatalf("usage or cases: %+v", first)
	}
	for _, c := range first.Cases {
		if c.Error != "" || c.ReviewID == "" || c.TP != 1 || c.FP != 1 || c.FN != 1 {
			t.Errorf("case %+v", c)
		}
	}
	if rt := tt.PerRiskType["intent"]; rt.FN != 1 {
		t.Errorf("per risk type %+v", tt.PerRiskType)
	}

	// With a judge that always agrees, each unmatched finding takes the
	// unmatched golden issue of its file or the text-only one.
	out, stderr, err = runEnv(t, env, "eval", "--dataset", dataset, "--format", "json", "--quiet",
		"--judge-model", "judge-model", "--compare", first.RunID)
	var ee exitError
	if err != nil && (!errors.As(err, &ee) || ee.code != exitFindings) {
		t.Fatalf("eval with judge: %v\n%s", err, stderr)
	}
	var second evalDoc
	if err := json.Unmarshal([]byte(out), &second); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if tt := second.Totals; tt.TP != 4 || tt.FP != 0 || tt.FN != 0 || tt.JudgeCalls != 2 {
		t.Fatalf("judge totals %+v", tt)
	}
	if c := second.Compare; c == nil || !c.FPDown || !c.FNNotUp || (err == nil) != c.Pass {
		t.Fatalf("compare %+v, err %v", c, err)
	}
	if strings.Contains(stderr, "warning") {
		t.Errorf("comparing like runs warned:\n%s", stderr)
	}
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	judged := 0
	for _, c := range second.Cases {
		calls, err := st.ListLLMCalls(context.Background(), c.ReviewID)
		if err != nil {
			t.Fatal(err)
		}
		for _, call := range calls {
			if call.Stage == "judge" && call.Model == "judge-model" && call.Status == "ok" {
				judged++
			}
		}
	}
	if judged != 2 {
		t.Errorf("%d judge calls recorded in llm_calls, want 2", judged)
	}
	stored, err := st.GetEvalRun(context.Background(), second.RunID)
	if err != nil || stored.TP != 4 || stored.JudgeModel != "judge-model" || len(stored.Results) != 2 {
		t.Fatalf("stored run %+v %v", stored, err)
	}

	// Markdown: the comparison ends with a verdict line.
	out, _, err = runEnv(t, env, "eval", "--dataset", dataset, "--quiet", "--compare", first.RunID)
	if !strings.Contains(out, "| 2 | 2 | 2 | 0.500 | 0.500 | 0.500 |") || !strings.Contains(out, "FAIL: FP not down (2 → 2)") ||
		!errors.As(err, &ee) || ee.code != exitFindings {
		t.Fatalf("markdown compare: %v\n%s", err, out)
	}
}

func TestEvalAblationRunsEachToggleOff(t *testing.T) {
	t.Parallel()
	env := testEnv{}
	srv := llmfake.New(llmfake.Markers(""))
	defer srv.Close()
	for k, v := range map[string]string{
		"DATABASE_URL": testenv.IsolatedSchema(t), "OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k",
		"REVIEWFLEET_EXPERT_SNAPSHOT_DIR": t.TempDir(), "REVIEWFLEET_HARNESS_VERIFY_ENABLED": "false",
	} {
		env[k] = v
	}
	if _, _, err := runEnv(t, env, "migrate"); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runEnv(t, env, "eval", "--dataset", evalRepo(t), "--format", "json", "--quiet", "--toggles", "verify,eval")
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr)
	}
	var doc evalDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Ablation) != 2 || doc.Ablation[0].Toggle != "verify" || doc.Ablation[1].Toggle != "eval" {
		t.Fatalf("ablation %+v", doc.Ablation)
	}
	// The markers reviewer finds the same with or without each stage.
	for _, a := range doc.Ablation {
		if a.Delta.TP != 0 || a.Delta.FP != 0 || a.Delta.FN != 0 {
			t.Errorf("%s: delta %+v", a.Toggle, a.Delta)
		}
	}
	if doc.Totals.TP != 2 {
		t.Errorf("all-on totals %+v", doc.Totals)
	}
	if _, _, err := runEnv(t, env, "eval", "--dataset", "x", "--toggles", "verify,nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown toggle: %v", err)
	}
}

func TestEvalImportWritesADataset(t *testing.T) {
	t.Parallel()
	env := testEnv{}
	var asked []string
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path+" "+r.Header.Get("Authorization"))
		if strings.Contains(r.Header.Get("Accept"), "diff") {
			fmt.Fprint(w, "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1 +1,2 @@\n package x\n+var y = 1\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"number": 3, "title": "T", "base": {"repo": {"clone_url": "https://example.com/o/r.git"}}}`)
	}))
	defer gh.Close()
	env["GITHUB_API_URL"] = gh.URL + "/"
	env["GITHUB_TOKEN"] = "secret-token"
	golden := filepath.Join(t.TempDir(), "golden.json")
	if err := os.WriteFile(golden, []byte(`[{"pr_title": "T", "url": "https://github.com/o/r/pull/3",
		"comments": [{"comment": "y is unused", "severity": "Low"}]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "ds")
	stdout, _, err := runEnv(t, env, "eval", "import", "--golden", golden, "--out", out)
	if err != nil || !strings.Contains(stdout, "wrote 1 cases") {
		t.Fatalf("import: %v\n%s", err, stdout)
	}
	if len(asked) != 2 || asked[0] != "/repos/o/r/pulls/3 Bearer secret-token" {
		t.Errorf("GitHub was asked %q", asked)
	}
	cases, err := evaluation.LoadDataset(out)
	if err != nil || len(cases) != 1 || cases[0].Golden[0].File != "" || cases[0].Golden[0].Severity != "Low" {
		t.Fatalf("dataset %+v %v", cases, err)
	}
	if _, _, err := runEnv(t, env, "eval", "import", "--golden", golden); err == nil || !strings.Contains(err.Error(), "--out") {
		t.Errorf("missing --out: %v", err)
	}
}

// On a fleet, --parallel reviews cases at once: the two reviews overlap,
// the totals and the order of the cases are those of a sequential run, and
// each judge call is recorded with its own case's review. Without a fleet
// the flag is refused.
func TestEvalParallelOnAFleet(t *testing.T) {
	t.Parallel()
	env, dsn := judgingEnv(t, 40*time.Millisecond) // long enough reviews to overlap
	dataset := evalRepo(t)
	if _, _, err := runEnv(t, env, "eval", "--dataset", dataset, "--parallel", "2"); err == nil || !strings.Contains(err.Error(), "--parallel above 1 needs a fleet") {
		t.Fatalf("--parallel without a fleet: %v", err)
	}

	env["REDIS_URL"] = testenv.RedisURL(t)
	env["REVIEWFLEET_WORKER_HEALTH_ADDR"] = "127.0.0.1:0"
	_, workerLog := startWorkerProcess(t, env)

	out, stderr, err := runEnv(t, env, "eval", "--dataset", dataset, "--format", "json", "--parallel", "2", "--judge-model", "judge-model")
	if err != nil {
		t.Fatalf("eval --parallel 2: %v\n%s\nworker:\n%s", err, stderr, workerLog.String())
	}
	var doc evalDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if tt := doc.Totals; tt.TP != 4 || tt.FP != 0 || tt.FN != 0 || tt.Golden != 4 || tt.JudgeCalls != 2 {
		t.Fatalf("totals %+v", tt)
	}
	if len(doc.Cases) != 2 || doc.Cases[0].Name != "diff-case" || doc.Cases[1].Name != "git-case" {
		t.Fatalf("cases %+v, want the dataset's order", doc.Cases)
	}
	if strings.Count(stderr, "eval run: case ") != 2 {
		t.Errorf("progress:\n%s", stderr)
	}
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var reviews [2]review.Review
	for i, c := range doc.Cases {
		if reviews[i], err = st.GetReview(context.Background(), c.ReviewID); err != nil {
			t.Fatal(err)
		}
		calls, err := st.ListLLMCalls(context.Background(), c.ReviewID)
		if err != nil {
			t.Fatal(err)
		}
		judged := 0
		for _, call := range calls {
			if call.Stage == "judge" {
				judged++
			}
		}
		if judged != 1 {
			t.Errorf("case %s: %d judge calls recorded with its review, want 1", c.Name, judged)
		}
	}
	a, b := reviews[0], reviews[1]
	if a.FinishedAt == nil || b.FinishedAt == nil || !b.CreatedAt.Before(*a.FinishedAt) || !a.CreatedAt.Before(*b.FinishedAt) {
		t.Errorf("the two reviews did not overlap: %s–%v and %s–%v", a.CreatedAt, a.FinishedAt, b.CreatedAt, b.FinishedAt)
	}

	// The parallelism is stored with the run, and comparing against a run
	// made with another one says so.
	_, stderr, err = runEnv(t, env, "eval", "--dataset", dataset, "--format", "json", "--quiet", "--compare", doc.RunID)
	var ee exitError
	if err != nil && (!errors.As(err, &ee) || ee.code != exitFindings) {
		t.Fatalf("eval --compare: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "reviewed 2 case(s) at once, this run 1") {
		t.Errorf("no warning about the different parallelism:\n%s", stderr)
	}
}
