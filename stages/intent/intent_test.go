package intent_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/prompts"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/stages/intent"
	"github.com/reviewfleet/reviewfleet/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

const goDiff = `diff --git a/worker.go b/worker.go
--- a/worker.go
+++ b/worker.go
@@ -10,2 +10,4 @@ func run() {
 	x := 1
+	go func() { results <- compute(x) }()
+	total += <-results
 	return
`

const cssDiff = `diff --git a/site.css b/site.css
--- a/site.css
+++ b/site.css
@@ -1,2 +1,2 @@
 body {
-  color: red;
+  color: blue;
`

func setup(t *testing.T, cfg config.Config, mode string, files map[string]string) (*store.Store, string) {
	t.Helper()
	st := stagetest.Store(t)
	nr := review.NewReview{Repo: "/r", Source: "diff", Purpose: "Compute results in the background", IntentMode: mode, Timeout: time.Hour, Config: pipeline.Snapshot(cfg)}
	var paths []string
	for p, d := range files {
		content := strings.Repeat("line\n", 20)
		nr.Files = append(nr.Files, review.File{Path: p, Change: "modified", Diff: d, ChangedLines: []int{11, 12}, Content: &content})
		paths = append(paths, p)
	}
	payload, _ := json.Marshal(intent.ItemPayload{Mode: mode, Files: paths})
	nr.Items = []review.Item{{Stage: review.StageIntent, Key: "i1", Payload: payload}}
	id, err := st.CreateReview(context.Background(), nr)
	if err != nil {
		t.Fatal(err)
	}
	return st, id
}

func TestPerFileIntentStoresFindingsOnTheTaskFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, srv := stagetest.LLM(t, llmfake.Static(llmfake.JSON(map[string]any{"findings": []map[string]any{
		{"risk_type": "concurrency", "file": "somewhere/else.go", "line_start": 12, "line_end": 11,
			"description": "unsynchronised read of results", "suggestion": "use a WaitGroup", "quote": "", "fix": "", "severity": "high", "confidence": 0.8},
		{"risk_type": "robustness", "file": "worker.go", "line_start": 11, "line_end": 11,
			"description": "  ", "suggestion": "", "quote": "", "fix": "", "severity": "low", "confidence": 0.3},
		{"risk_type": "static", "file": "worker.go", "line_start": 0, "line_end": 0,
			"description": "whole-file remark", "suggestion": "", "quote": "", "fix": "", "severity": "low", "confidence": 1.7},
	}})))
	st, id := setup(t, config.Default(), intent.ModePerFile, map[string]string{"worker.go": goDiff})
	var warmed []string
	h := &intent.Handler{Store: st, LLM: client, Prompts: stagetest.Prompts(t), Warm: func(r review.Review) { warmed = append(warmed, r.ID) }}
	if err := h.Work(ctx, stagetest.Job(t, st, pipeline.Payload{ReviewID: id, Stage: review.StageIntent, Item: "i1"})); err != nil {
		t.Fatal(err)
	}
	if len(warmed) != 1 || warmed[0] != id {
		t.Errorf("head tree warmed for %v, want once for the review with findings", warmed)
	}
	fs, err := st.ListFindings(ctx, id)
	if err != nil || len(fs) != 2 {
		t.Fatalf("findings: %+v %v (an empty description must be dropped)", fs, err)
	}
	if fs[1].LineStart != 1 || fs[1].LineEnd != 1 || fs[1].Confidence != 1 {
		t.Errorf("line 0 must become line 1 and confidence stay within [0,1]: %+v", fs[1])
	}
	if fs[0].File != "worker.go" || fs[0].LineStart != 11 || fs[0].LineEnd != 12 || fs[0].RiskType != review.Concurrency {
		t.Fatalf("finding not normalised: %+v", fs[0])
	}
	req := srv.Requests()[0]
	if llmfake.SchemaName(req) != intent.SchemaName {
		t.Errorf("schema name %q", llmfake.SchemaName(req))
	}
	user := req.Messages[len(req.Messages)-1].Content
	if !strings.Contains(user, "Compute results in the background") {
		t.Errorf("the change's purpose is not in the prompt:\n%s", user)
	}
	if !strings.Contains(user, "11") || !strings.Contains(user, "go func()") {
		t.Errorf("the diff is not shown with new-side numbers:\n%s", user)
	}
	file, _ := st.GetFile(ctx, id, "worker.go")
	if len(file.Packs) == 0 || len(file.Packs) == 5 {
		t.Errorf("a goroutine diff should select some packs, not all: %v", file.Packs)
	}
	if it, _ := st.GetItem(ctx, id, review.StageIntent, "i1"); it.Status != review.ItemDone {
		t.Errorf("item %s", it.Status)
	}
}

func TestProgressiveContextToggle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sizes := map[bool]int{}
	for _, enabled := range []bool{true, false} {
		client, srv := stagetest.LLM(t, llmfake.Static(llmfake.JSON(map[string]any{"findings": []any{}})))
		cfg := config.Default()
		cfg.Harness.ProgressiveContextEnabled = enabled
		st, id := setup(t, cfg, intent.ModePerFile, map[string]string{"worker.go": goDiff})
		h := &intent.Handler{Store: st, LLM: client, Prompts: stagetest.Prompts(t),
			Warm: func(review.Review) { t.Error("head tree warmed for a review in which intent found nothing") }}
		if err := h.Work(ctx, stagetest.Job(t, st, pipeline.Payload{ReviewID: id, Stage: review.StageIntent, Item: "i1"})); err != nil {
			t.Fatal(err)
		}
		sizes[enabled] = len(srv.Requests()[0].Messages[0].Content)
		file, _ := st.GetFile(ctx, id, "worker.go")
		if !enabled && len(file.Packs) != len(prompts.AllPacks) {
			t.Errorf("with progressive context off every pack is used, got %v", file.Packs)
		}
	}
	if sizes[true] >= sizes[false] {
		t.Fatalf("system prompt with progressive context (%d chars) is not shorter than without (%d)", sizes[true], sizes[false])
	}
}

func TestChunkedIntentMatchesFilesByName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, srv := stagetest.LLM(t, func(context.Context, openai.ChatCompletionRequest) llmfake.Reply {
		return llmfake.JSON(map[string]any{"findings": []map[string]any{
			{"risk_type": "concurrency", "file": "b/worker.go", "line_start": 11, "line_end": 11, "description": "race", "suggestion": "", "quote": "", "fix": "", "severity": "high", "confidence": 0.7},
			{"risk_type": "static", "file": "nowhere.go", "line_start": 1, "line_end": 1, "description": "ghost", "suggestion": "", "quote": "", "fix": "", "severity": "low", "confidence": 0.7},
		}})
	})
	st, id := setup(t, config.Default(), intent.ModeChunked, map[string]string{"worker.go": goDiff, "site.css": cssDiff})
	h := &intent.Handler{Store: st, LLM: client, Prompts: stagetest.Prompts(t)}
	if err := h.Work(ctx, stagetest.Job(t, st, pipeline.Payload{ReviewID: id, Stage: review.StageIntent, Item: "i1"})); err != nil {
		t.Fatal(err)
	}
	fs, _ := st.ListFindings(ctx, id)
	if len(fs) != 1 || fs[0].File != "worker.go" {
		t.Fatalf("findings: %+v (a finding on a file outside the chunk must be dropped)", fs)
	}
	user := srv.Requests()[0].Messages[1].Content
	if !strings.Contains(user, "worker.go") || !strings.Contains(user, "site.css") || strings.Contains(user, "Head version") {
		t.Errorf("a chunk shows every file's diff and no file contents:\n%s", user)
	}
}

// Issue 11, "Prompts" (seed 000's intent sees the change, not one file in
// isolation): a per-file intent prompt lists every file the change
// touches with its change kind, so cross-file breakage can be named.
func TestIntentSeesEveryFileTheChangeTouches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, srv := stagetest.LLM(t, llmfake.Static(llmfake.JSON(map[string]any{"findings": []any{}})))
	st := stagetest.Store(t)
	content := strings.Repeat("line\n", 20)
	payload, _ := json.Marshal(intent.ItemPayload{Mode: intent.ModePerFile, Files: []string{"worker.go"}})
	id, err := st.CreateReview(ctx, review.NewReview{Repo: "/r", Source: "diff", IntentMode: intent.ModePerFile, Timeout: time.Hour,
		Config: pipeline.Snapshot(config.Default()),
		Files: []review.File{
			{Path: "worker.go", Change: "modified", Diff: goDiff, ChangedLines: []int{11, 12}, Content: &content},
			{Path: "api/compute.go", OldPath: "api/calc.go", Change: "renamed"},
			{Path: "api/legacy.go", Change: "deleted"},
		},
		Items: []review.Item{{Stage: review.StageIntent, Key: "i1", Payload: payload}}})
	if err != nil {
		t.Fatal(err)
	}
	h := &intent.Handler{Store: st, LLM: client, Prompts: stagetest.Prompts(t)}
	if err := h.Work(ctx, stagetest.Job(t, st, pipeline.Payload{ReviewID: id, Stage: review.StageIntent, Item: "i1"})); err != nil {
		t.Fatal(err)
	}
	user := srv.Requests()[0].Messages[1].Content
	for _, want := range []string{"Every file this change touches (3", "api/compute.go (renamed from api/calc.go", "api/legacy.go (deleted", "worker.go (modified"} {
		if !strings.Contains(user, want) {
			t.Errorf("intent prompt lacks %q:\n%s", want, user)
		}
	}
}

// Issue 11, "Prompts": a finding carries the code it is about and may
// carry a fix as a unified diff; both are kept only when they match the
// head version, and are stored with the finding.
func TestQuoteAndFixAreCheckedAgainstTheHeadVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fix := "@@ -11,2 +11,3 @@\n line\n+\tmu.Lock()\n line\n"
	client, _ := stagetest.LLM(t, llmfake.Static(llmfake.JSON(map[string]any{"findings": []map[string]any{
		{"risk_type": "concurrency", "file": "worker.go", "line_start": 11, "line_end": 12, "description": "race", "suggestion": "lock",
			"quote": "line", "fix": fix, "severity": "high", "confidence": 0.8},
		{"risk_type": "concurrency", "file": "worker.go", "line_start": 11, "line_end": 12, "description": "invented", "suggestion": "",
			"quote": "results <- compute(y)", "fix": "@@ -3,1 +3,1 @@\n-nothing here\n+x\n", "severity": "high", "confidence": 0.8},
	}})))
	st, id := setup(t, config.Default(), intent.ModePerFile, map[string]string{"worker.go": goDiff})
	h := &intent.Handler{Store: st, LLM: client, Prompts: stagetest.Prompts(t)}
	if err := h.Work(ctx, stagetest.Job(t, st, pipeline.Payload{ReviewID: id, Stage: review.StageIntent, Item: "i1"})); err != nil {
		t.Fatal(err)
	}
	fs, err := st.ListFindings(ctx, id)
	if err != nil || len(fs) != 2 {
		t.Fatalf("findings %+v (%v)", fs, err)
	}
	if fs[0].Quote != "line" || fs[0].Fix != fix {
		t.Errorf("a quote and fix that match the head version were not kept: %q %q", fs[0].Quote, fs[0].Fix)
	}
	if fs[1].Quote != "" || fs[1].Fix != "" {
		t.Errorf("a quote and fix not in the head version were kept: %q %q", fs[1].Quote, fs[1].Fix)
	}
}
