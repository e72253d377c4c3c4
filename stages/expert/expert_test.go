package expert_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/agent"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/metrics"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/snapshot"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/stages/expert"
	"github.com/reviewfleet/reviewfleet/stages/report"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

const src = "package a\n\nfunc first(xs []int) int {\n\treturn xs[0]\n}\n"

func run(t *testing.T, h llmfake.Handler) (string, review.Finding, *expert.Handler, *llmfake.Server) {
	t.Helper()
	st := stagetest.Store(t)
	client, srv := stagetest.LLM(t, h)
	cfg := config.Default()
	cfg.Expert.MaxMissingCompletion = 2
	id, fs := stagetest.Review(t, st, cfg, review.StageExpert,
		[]stagetest.File{{Path: "a.go", Content: src, Changed: []int{4}}},
		[]review.Finding{{RiskType: review.Robustness, File: "a.go", LineStart: 4, LineEnd: 4, Description: "xs may be empty", Severity: review.High, Confidence: 0.8}})
	hd := &expert.Handler{Store: st, LLM: client, Prompts: stagetest.Prompts(t), Snapshots: &snapshot.Cache{Dir: t.TempDir(), Store: st}}
	if err := hd.Work(context.Background(), stagetest.Payload(id, review.StageExpert, fs[0])); err != nil {
		t.Fatal(err)
	}
	return id, fs[0], hd, srv
}

func TestAcceptedVerdictIsStoredWithItsRun(t *testing.T) {
	t.Parallel()
	id, f, h, _ := run(t, llmfake.Script(
		llmfake.Tools(llmfake.ToolCall("read_file", map[string]any{"path": "a.go", "start_line": 1, "end_line": 5})),
		llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{
			"verdict": "confirmed", "confidence": 0.9, "reasoning": "xs[0] with no length check",
			"evidence": []map[string]any{{"kind": "content_contains", "path": "a.go", "start_line": 4, "end_line": 4, "match": "return xs[0]", "required": true}},
		})),
	))
	v, ok := stagetest.Verdict(t, h.Store, id, f.ID, review.StageExpert)
	if !ok || v.Verdict != review.VerdictConfirmed || v.ConfidenceAfter != 0.9 || v.ConfidenceBefore != 0.8 {
		t.Fatalf("verdict %+v", v)
	}
	runs, err := h.Store.ListExpertRuns(context.Background(), id)
	if err != nil || runs[f.ID].StopReason != "accepted" || runs[f.ID].Rounds != 2 {
		t.Fatalf("run %+v %v", runs[f.ID], err)
	}
	var tools map[string]int
	_ = json.Unmarshal(runs[f.ID].ToolCalls, &tools)
	if tools["read_file"] != 1 {
		t.Errorf("tool calls %v", tools)
	}
}

func TestAcceptGateCatchesAQuoteNotInTheFile(t *testing.T) {
	t.Parallel()
	id, f, h, _ := run(t, llmfake.Script(
		llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{
			"verdict": "confirmed", "confidence": 0.9, "reasoning": "claims a nil map write",
			"evidence": []map[string]any{{"kind": "content_contains", "path": "a.go", "start_line": 1, "end_line": 5, "match": "m[k] = v", "required": true}},
		})),
	))
	runs, _ := h.Store.ListExpertRuns(context.Background(), id)
	if runs[f.ID].StopReason != "accept_check_failed" {
		t.Fatalf("stop reason %q", runs[f.ID].StopReason)
	}
	v, _ := stagetest.Verdict(t, h.Store, id, f.ID, review.StageExpert)
	if v.ConfidenceAfter >= 0.9 {
		t.Fatalf("a verdict failing the accept gate kept its confidence: %+v", v)
	}
}

func TestHostileToolCallsNeverLeakOutsideContent(t *testing.T) {
	t.Parallel()
	secret := "reviewfleet-expert-secret-" + t.Name()
	outside := t.TempDir() + "/secret.txt"
	if err := os.WriteFile(outside, []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	id, f, h, srv := run(t, llmfake.Script(
		llmfake.Tools(llmfake.ToolCall("read_file", map[string]any{"path": outside, "start_line": 1, "end_line": 5})),
		llmfake.Tools(llmfake.ToolCall("read_file", map[string]any{"path": "../../../../../../" + outside, "start_line": 1, "end_line": 5})),
		llmfake.Tools(llmfake.ToolCall("read_file", map[string]any{"path": "/proc/self/environ"})),
		llmfake.Tools(openai.ToolCall{ID: "bad", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "grep", Arguments: "{not json"}}),
		llmfake.Text("I think it is fine."),
		llmfake.Text("Really."),
	))
	runs, _ := h.Store.ListExpertRuns(context.Background(), id)
	if runs[f.ID].StopReason != "missing_completion_signal" {
		t.Fatalf("stop reason %q", runs[f.ID].StopReason)
	}
	for i, req := range srv.Requests() {
		body, _ := json.Marshal(req)
		if strings.Contains(string(body), secret) || strings.Contains(string(body), "PATH=") {
			t.Fatalf("request %d carries content from outside the repository", i)
		}
	}
	if v, ok := stagetest.Verdict(t, h.Store, id, f.ID, review.StageExpert); !ok || v.Verdict != review.VerdictInconclusive || v.ConfidenceAfter > 0.8 {
		t.Fatalf("verdict %+v", v)
	}
}

func TestApplyOnlyAcceptedRunsRaiseConfidence(t *testing.T) {
	t.Parallel()
	cases := []struct {
		res     agent.Result
		before  float64
		want    float64
		verdict string
	}{
		{agent.Result{StopReason: agent.StopAccepted, Verdict: "confirmed", Confidence: 0.9}, 0.5, 0.9, "confirmed"},
		{agent.Result{StopReason: agent.StopAccepted, Verdict: "refuted", Confidence: 0.9}, 0.8, 0.3, "refuted"},
		// Issue 11: what the expert did not establish ends at most at the floor.
		{agent.Result{StopReason: agent.StopInconclusive, Verdict: "inconclusive", Confidence: 0.9}, 0.5, 0.3, "inconclusive"},
		{agent.Result{StopReason: agent.StopInconclusive, Verdict: "inconclusive", Confidence: 0.2}, 0.5, 0.2, "inconclusive"},
		{agent.Result{StopReason: agent.StopAcceptCheckFailed, Verdict: "confirmed", Confidence: 0.45}, 0.3, 0.3, "inconclusive"},
		{agent.Result{StopReason: agent.StopAcceptCheckFailed, Verdict: "confirmed", Confidence: 0.45}, 0.8, 0.3, "inconclusive"},
		{agent.Result{StopReason: agent.StopRepeatCycle, Verdict: "inconclusive", Confidence: 0.2}, 0.8, 0.2, "inconclusive"},
		// Issue 11, point 1: a failed run lowers its finding to the floor, never raises it.
		{agent.Result{StopReason: agent.StopTimeout, Confidence: 0.1}, 0.8, 0.3, "failed"},
		{agent.Result{StopReason: agent.StopError, Confidence: 0.9}, 0.8, 0.3, "failed"},
		{agent.Result{StopReason: agent.StopError, Confidence: 0.9}, 0.2, 0.2, "failed"},
	}
	for _, c := range cases {
		got, v := expert.Apply(c.before, 0.3, c.res)
		if got != c.want || v != c.verdict {
			t.Errorf("Apply(%v, %s/%s) = %v %s, want %v %s", c.before, c.res.StopReason, c.res.Verdict, got, v, c.want, c.verdict)
		}
	}
}

// An endpoint without function calling gets one structured
// reviewfleet_expert call instead, and the accept gate still checks it.
func TestEndpointWithoutToolsFallsBackToOneStructuredCall(t *testing.T) {
	t.Parallel()
	verdict := map[string]any{
		"reasoning": "xs[0] with no length check", "verdict": "confirmed", "confidence": 0.9,
		"evidence": []map[string]any{{"kind": "content_contains", "path": "a.go", "start_line": 4, "end_line": 4, "match": "return xs[0]", "required": true}},
	}
	id, f, h, srv := run(t, func(_ context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		if len(req.Tools) > 0 {
			return llmfake.Fail(400, "tools are not supported by this server")
		}
		if llmfake.SchemaName(req) == expert.SchemaName {
			return llmfake.JSON(verdict)
		}
		return llmfake.Fail(400, "unexpected request")
	})
	v, ok := stagetest.Verdict(t, h.Store, id, f.ID, review.StageExpert)
	if !ok || v.Verdict != review.VerdictConfirmed || v.ConfidenceAfter != 0.9 {
		t.Fatalf("verdict %+v", v)
	}
	runs, _ := h.Store.ListExpertRuns(context.Background(), id)
	if runs[f.ID].StopReason != "accepted" || runs[f.ID].Rounds != 1 {
		t.Fatalf("run %+v", runs[f.ID])
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d requests, want the refused tools request and one structured call", n)
	}
}

// A retryable status (408) is retried, not mistaken for an endpoint
// without tools; a refusal whose body is not OpenAI's error shape still
// triggers the fallback.
func TestFallbackOnlyForRealRefusals(t *testing.T) {
	t.Parallel()
	st := stagetest.Store(t)
	cfg := config.Default()
	id, fs := stagetest.Review(t, st, cfg, review.StageExpert,
		[]stagetest.File{{Path: "a.go", Content: src, Changed: []int{4}}},
		[]review.Finding{{RiskType: review.Robustness, File: "a.go", LineStart: 4, LineEnd: 4, Description: "xs may be empty", Severity: review.High, Confidence: 0.8}})
	client, srv := stagetest.LLM(t, func(_ context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		if len(req.Tools) > 0 {
			return llmfake.Fail(408, "slow down")
		}
		return llmfake.Fail(400, "unexpected structured call")
	})
	h := &expert.Handler{Store: st, LLM: client, Prompts: stagetest.Prompts(t), Snapshots: &snapshot.Cache{Dir: t.TempDir(), Store: st}}
	if err := h.Work(context.Background(), stagetest.Payload(id, review.StageExpert, fs[0])); err == nil {
		t.Fatal("a 408 must be retried")
	}
	for _, r := range srv.Requests() {
		if len(r.Tools) == 0 {
			t.Fatal("a 408 triggered the structured fallback")
		}
	}

	_, f, h2, _ := run(t, func(_ context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		if len(req.Tools) > 0 {
			return llmfake.Reply{Status: 400, Raw: `{"object":"error","message":"tool choice requires a flag on this server"}`}
		}
		return llmfake.JSON(map[string]any{"reasoning": "r", "verdict": "refuted", "confidence": 0.1, "evidence": []map[string]any{{"kind": "content_contains", "path": "a.go", "start_line": 4, "end_line": 4, "match": "return xs[0]", "required": true}}})
	})
	runs, _ := h2.Store.ListExpertRuns(context.Background(), f.ReviewID)
	if runs[f.ID].StopReason != "accepted" || runs[f.ID].Rounds != 1 {
		t.Fatalf("fallback run %+v", runs[f.ID])
	}
}

// Issue 11, point 1 (seed 001: every run stores its true stop reason): an
// expert run that fails lowers its finding below the threshold, never
// leaves it as if unchecked, and is listed as a failed item with the reason.
func TestFailedRunLowersItsFindingAndIsListedAsFailed(t *testing.T) {
	t.Parallel()
	id, f, h, _ := run(t, llmfake.Static(llmfake.Fail(401, "invalid api key")))
	v, ok := stagetest.Verdict(t, h.Store, id, f.ID, review.StageExpert)
	if !ok || v.Verdict != review.VerdictFailed || v.ConfidenceAfter > 0.3 {
		t.Fatalf("verdict %+v", v)
	}
	got, err := h.Store.GetFinding(context.Background(), f.ID)
	if err != nil || got.Confidence > 0.3 {
		t.Fatalf("finding confidence %v after a failed run (%v)", got.Confidence, err)
	}
	failed, err := h.Store.FailedItems(context.Background(), id)
	if err != nil || len(failed) != 1 || failed[0].Stage != review.StageExpert || !strings.Contains(failed[0].Error, "invalid api key") {
		t.Fatalf("failed items %+v (%v)", failed, err)
	}
}

// Issue 11, "How it will be checked": a model that answers inconclusive,
// or fails, during expert runs leaves no such finding above the threshold
// in the report, and the failed run is counted as a failed item.
func TestReportShowsNoUnestablishedFindingAndCountsFailedRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		reply  llmfake.Handler
		failed int
	}{
		{"inconclusive", llmfake.Script(llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{
			"verdict": "inconclusive", "confidence": 0.95, "reasoning": "cannot tell", "evidence": []any{}}))), 0},
		{"failing", llmfake.Static(llmfake.Fail(401, "invalid api key")), 1},
	} {
		id, _, h, _ := run(t, tc.reply)
		rep, err := report.Build(ctx, h.Store, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Findings) != 0 {
			t.Errorf("%s: %d findings above the threshold: %+v", tc.name, len(rep.Findings), rep.Findings[0].Finding)
		}
		if len(rep.FailedItems) != tc.failed {
			t.Errorf("%s: %d failed items, want %d", tc.name, len(rep.FailedItems), tc.failed)
		}
	}
}

// TestToolCallsAreStoredWithOutcomes: each tool call of a run is stored
// with its outcome, the run keeps the counts by tool and outcome, and the
// metric counts them, an invented tool name as "other".
func TestToolCallsAreStoredWithOutcomes(t *testing.T) {
	t.Parallel()
	before := toolMetric(t, "other", "error")
	id, f, h, _ := run(t, llmfake.Script(
		llmfake.Tools(
			llmfake.ToolCall("grep", map[string]any{"pattern": `xs\[0\]`, "path_glob": "a.go"}),
			llmfake.ToolCall("grep", map[string]any{"pattern": `no such code`, "path_glob": "**/*.go"}),
			llmfake.ToolCall("read_file", map[string]any{"path": "a.go"}),
			llmfake.ToolCall("run_shell_for_tool_health", map[string]any{"cmd": "id"}),
			// A garbled call: a NUL in the name, arguments that are not JSON.
			llmfake.ToolCall("shell\x00for_tool_health", "{\"cmd\": \x00"),
		),
		llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{
			"verdict": "confirmed", "confidence": 0.9, "reasoning": "xs[0] with no length check",
			"evidence": []map[string]any{{"kind": "content_contains", "path": "a.go", "start_line": 4, "end_line": 4, "match": "return xs[0]", "required": true}},
		})),
	))
	calls, err := h.Store.ListExpertToolCalls(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ tool, outcome string }{{"grep", "hit"}, {"grep", "empty"}, {"read_file", "hit"}, {"run_shell_for_tool_health", "error"},
		{"shell\uFFFDfor_tool_health", "error"}}
	if len(calls) != len(want) {
		t.Fatalf("stored calls %+v, want %d", calls, len(want))
	}
	for i, w := range want {
		c := calls[i]
		if c.FindingID != f.ID || c.Seq != i+1 || c.Round != 1 || c.Tool != w.tool || c.Outcome != w.outcome {
			t.Errorf("call %d = %+v, want %s %s", i+1, c, w.tool, w.outcome)
		}
	}
	if !strings.Contains(calls[0].Args, `xs\\[0\\]`) || calls[2].ResultBytes == 0 {
		t.Errorf("args %q, read bytes %d", calls[0].Args, calls[2].ResultBytes)
	}
	runs, _ := h.Store.ListExpertRuns(context.Background(), id)
	var counts map[string]map[string]int
	if err := json.Unmarshal(runs[f.ID].ToolOutcomes, &counts); err != nil {
		t.Fatal(err)
	}
	if counts["grep"]["hit"] != 1 || counts["grep"]["empty"] != 1 || counts["read_file"]["hit"] != 1 {
		t.Errorf("run tool outcomes = %v", counts)
	}
	if got := toolMetric(t, "other", "error") - before; got != 2 {
		t.Errorf("metric other/error grew by %v, want 2", got)
	}
}

// toolMetric reads reviewfleet_expert_tool_calls_total{tool, outcome}.
func toolMetric(t *testing.T, tool, outcome string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.ExpertToolCalls)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["tool"] == tool && labels["outcome"] == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestModelTextWithNULIsStored: reasoning and evidence with a NUL byte
// (which Postgres text and jsonb refuse) are stored with the byte
// replaced, instead of failing the item on every attempt.
func TestModelTextWithNULIsStored(t *testing.T) {
	t.Parallel()
	id, f, h, _ := run(t, llmfake.Script(
		llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{
			"verdict": "confirmed", "confidence": 0.9, "reasoning": "xs[0]\x00 unchecked",
			"evidence": []map[string]any{{"kind": "content_contains", "path": "a.go", "start_line": 4, "end_line": 4, "match": "return\x00 xs[0]", "required": true}},
		})),
	))
	v, ok := stagetest.Verdict(t, h.Store, id, f.ID, review.StageExpert)
	if !ok || !strings.Contains(v.Reason, "xs[0]\uFFFD unchecked") {
		t.Fatalf("verdict %+v", v)
	}
	runs, _ := h.Store.ListExpertRuns(context.Background(), id)
	if run := runs[f.ID]; run.StopReason != "accept_check_failed" || !strings.Contains(string(run.Checks), `return\ufffd xs[0]`) &&
		!strings.Contains(string(run.Checks), "return\uFFFD xs[0]") {
		t.Errorf("run %s, checks %s", run.StopReason, run.Checks)
	}
}
