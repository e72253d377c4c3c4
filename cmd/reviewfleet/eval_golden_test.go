package main

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

// goldenDoc is what these tests read of eval's JSON.
type goldenDoc struct {
	Totals struct {
		TP, FP, FN        int
		Golden            int
		Precision, Recall float64
		PerRiskType       map[string]struct{ TP, FP, FN int } `json:"per_risk_type"`
		ForeignLabels     []string                            `json:"foreign_labels"`
	} `json:"totals"`
	Cases []struct {
		Name  string `json:"name"`
		Error string `json:"error"`
		TP    int
		FN    int
	} `json:"cases"`
}

// blindSearches answers every grep and find_symbol call of the
// conversation with an empty result before the reviewer sees it: what a
// model sees when the search tools are dead.
func blindSearches(req openai.ChatCompletionRequest) openai.ChatCompletionRequest {
	names := map[string]string{}
	msgs := make([]openai.ChatCompletionMessage, len(req.Messages))
	for i, m := range req.Messages {
		for _, tc := range m.ToolCalls {
			names[tc.ID] = tc.Function.Name
		}
		if m.Role == openai.ChatMessageRoleTool {
			switch names[m.ToolCallID] {
			case "grep":
				m.Content = "no matching lines found"
			case "find_symbol":
				m.Content = "no definitions found"
			}
		}
		msgs[i] = m
	}
	req.Messages = msgs
	return req
}

// outcomesSince is how many tool results of each tool and outcome the
// reviewer received since before.
func outcomesSince(g *llmfake.GoldenReviewer, before map[string]map[string]int) map[string]map[string]int {
	now := g.ToolOutcomes()
	for tool, m := range now {
		for outcome := range m {
			m[outcome] -= before[tool][outcome]
		}
	}
	return now
}

func runGoldenEval(t *testing.T, env testEnv, dataset string, extra ...string) goldenDoc {
	t.Helper()
	args := append([]string{"eval", "--dataset", dataset, "--format", "json", "--quiet"}, extra...)
	out, stderr, err := runEnv(t, env, args...)
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr)
	}
	var doc goldenDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, c := range doc.Cases {
		if c.Error != "" {
			t.Errorf("case %s not reviewed: %s", c.Name, c.Error)
		}
	}
	return doc
}

// A reviewer that knows the polyglot dataset's golden issues and can only
// establish them through the expert's tools finds all of them, through a
// fleet (a worker process on a real Redis and Postgres), and refutes its
// decoys. The same reviewer loses the issues when the tools or the filter
// in front of them fail it: the totals depend on the tools working.
func TestEvalGoldenReviewerDependsOnTheExpertTools(t *testing.T) {
	t.Parallel()
	dataset, err := filepath.Abs(filepath.Join("..", "..", "testdata", "eval", "polyglot"))
	if err != nil {
		t.Fatal(err)
	}
	reviewer, err := llmfake.NewGoldenReviewer(context.Background(), dataset)
	if err != nil {
		t.Fatal(err)
	}
	golden := reviewer.Issues()
	var blind atomic.Bool
	answer := reviewer.Handler()
	srv := llmfake.New(func(ctx context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		if blind.Load() {
			req = blindSearches(req)
		}
		return answer(ctx, req)
	})
	defer srv.Close()
	env := testEnv{
		"DATABASE_URL": testenv.IsolatedSchema(t), "OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k",
		"REVIEWFLEET_EXPERT_SNAPSHOT_DIR": t.TempDir(), "REVIEWFLEET_WORKER_TASK_CHECK_INTERVAL": "20ms",
	}
	if _, _, err := runEnv(t, env, "migrate"); err != nil {
		t.Fatal(err)
	}

	// The search tools skip what the review ignores. Ignoring the
	// unchanged helpers (as the expert's filter once ignored every file)
	// hides exactly the code the cross-file issues depend on.
	t.Run("helpers hidden from the searches", func(t *testing.T) {
		hidden := maps.Clone(env)
		hidden["REVIEWFLEET_INTENT_IGNORE"] = "store/**, reports/storage.py, src/lib/**, **/AccountRepo.java"
		before := reviewer.ToolOutcomes()
		doc := runGoldenEval(t, hidden, dataset)
		if tt := doc.Totals; tt.TP != golden-4 || tt.FN != 4 || tt.FP != 0 {
			t.Errorf("with the helpers hidden: TP %d FN %d FP %d, want TP %d FN 4 FP 0", tt.TP, tt.FN, tt.FP, golden-4)
		}
		if got := outcomesSince(reviewer, before)["find_symbol"]["empty"]; got != 4 {
			t.Errorf("%d find_symbol calls found nothing, want the 4 of the hidden helpers", got)
		}
	})

	env["REDIS_URL"] = testenv.RedisURL(t)
	env["REVIEWFLEET_WORKER_HEALTH_ADDR"] = "127.0.0.1:0"
	_, workerLog := startWorkerProcess(t, env)

	before := reviewer.ToolOutcomes()
	doc := runGoldenEval(t, env, dataset, "--parallel", "2")
	tt := doc.Totals
	if tt.Golden != golden || golden < 10 || tt.Recall != 1 || tt.FN != 0 || tt.Precision < 0.9 {
		t.Fatalf("totals TP %d FP %d FN %d of %d golden issues, precision %.3f recall %.3f: want recall 1 and precision ≥ 0.9\nworker:\n%s",
			tt.TP, tt.FP, tt.FN, tt.Golden, tt.Precision, tt.Recall, workerLog.String())
	}
	if got := strings.Join(tt.ForeignLabels, ","); got != "auth-bypass,security" || tt.PerRiskType["security"].TP != 3 {
		t.Errorf("labels: foreign %q, per label %+v", got, tt.PerRiskType)
	}
	seen := outcomesSince(reviewer, before)
	for _, tool := range []string{"grep", "find_symbol"} {
		if seen[tool]["empty"] != 0 || seen[tool]["error"] != 0 {
			t.Errorf("%s: %v; every search looks for text that is in the repository", tool, seen[tool])
		}
	}
	// One grep per issue and per helper, one find_symbol per helper.
	if seen["grep"]["hit"] != golden+4 || seen["find_symbol"]["hit"] != 4 || seen["read_file"]["hit"] < golden+4 {
		t.Errorf("tool outcomes %v", seen)
	}

	// Searches that come back empty cost every issue: the reviewer refutes
	// what it cannot find, however true.
	blind.Store(true)
	before = reviewer.ToolOutcomes()
	doc = runGoldenEval(t, env, dataset, "--parallel", "2")
	if tt := doc.Totals; tt.TP != 0 || tt.FN != golden || tt.Recall != 0 {
		t.Errorf("with empty searches: TP %d FN %d recall %.3f, want nothing found", tt.TP, tt.FN, tt.Recall)
	}
	if got := outcomesSince(reviewer, before)["grep"]["empty"]; got < golden {
		t.Errorf("%d empty grep results, want at least one per issue", got)
	}
}
