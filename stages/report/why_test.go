package report_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/stages/report"
)

// A finding whose expert verdict failed the accept gate is listed below
// the threshold with the failed check by name and why it failed, in the
// Markdown and in the JSON.
func TestBuildSaysWhyBelowThreshold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	id, fs := stagetest.Review(t, st, config.Default(), review.StageExpert,
		[]stagetest.File{{Path: "store/users.go", Content: strings.Repeat("// x\n", 21) + "q := \"SELECT \" + name\n", Changed: []int{22}}},
		[]review.Finding{{RiskType: review.Authorization, File: "store/users.go", LineStart: 22, LineEnd: 22,
			Description: "SQL injection", Severity: review.Critical, Confidence: 0.9}})
	checks, _ := json.Marshal([]map[string]any{
		{"kind": "content_contains", "path": "store/users.go", "start_line": 22, "end_line": 22, "match": "\" + name", "required": true, "passed": true, "detail": "found"},
		{"kind": "specific_evidence", "path": "store/users.go", "start_line": 22, "end_line": 22, "required": true, "passed": false,
			"detail": "no passed content_contains check quotes a full line of store/users.go within 20 lines of 22-22"},
		{"kind": "tool_fact", "match": "optional", "required": false, "passed": false, "detail": "no tool result"},
	})
	v := review.Verdict{ReviewID: id, FindingID: fs[0].ID, Stage: review.StageExpert, Verdict: review.VerdictInconclusive,
		ConfidenceBefore: 0.9, ConfidenceAfter: 0.3, Reason: "[accept_check_failed] name is concatenated", Evidence: json.RawMessage(`[]`)}
	run := &review.ExpertRun{FindingID: fs[0].ID, StopReason: "accept_check_failed", Rounds: 2, ToolCalls: json.RawMessage(`{"read_file":2}`),
		Phases: json.RawMessage(`[]`), Checks: checks}
	if err := st.FinishVerdictItem(ctx, pipeline.FindingKey(fs[0].ID), v, run); err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(ctx, st, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.BelowThreshold) != 1 || rep.BelowThreshold[0].Why == nil {
		t.Fatalf("below threshold: %+v", rep.BelowThreshold)
	}
	why := rep.BelowThreshold[0].Why
	if why.Stage != "expert" || why.Kind != "accept_check_failed" || len(why.FailedChecks) != 1 || why.FailedChecks[0] != "specific_evidence store/users.go:22" {
		t.Errorf("reason = %+v", why)
	}
	stored, err := report.Render(rep)
	if err != nil {
		t.Fatal(err)
	}
	want := "**Why below 0.60:** expert: accept_check_failed — ✗ specific_evidence store/users.go:22: no passed content_contains check quotes a full line"
	if !strings.Contains(stored.Markdown, want) {
		t.Errorf("Markdown lacks %q:\n%s", want, stored.Markdown)
	}
	if !strings.Contains(string(stored.JSON), `"kind": "accept_check_failed"`) || !strings.Contains(string(stored.JSON), `"specific_evidence store/users.go:22"`) {
		t.Errorf("JSON lacks the reason:\n%s", stored.JSON)
	}
}

// A review of a diff alone names no work tree: its note says what it is,
// never "the work tree  is not on this worker" with a blank path.
func TestSnapshotNoteNeverBlank(t *testing.T) {
	t.Parallel()
	blank := "the work tree  is not on this worker" // as recorded with an empty path
	cases := []struct {
		r    review.Review
		want string
	}{
		{review.Review{Source: "diff", SnapshotFallback: blank}, "the review is of a diff alone, without a work tree"},
		{review.Review{Source: "diff", Snapshot: "/cache/trees/abc", SnapshotFallback: "the work tree /cache/trees/abc is not on this worker"},
			"the work tree /cache/trees/abc is not on this worker"},
		{review.Review{Source: "url", SnapshotFallback: "fetch abc: unreachable"}, "fetch abc: unreachable"},
		{review.Review{Source: "diff"}, ""},
	}
	for _, c := range cases {
		got := report.SnapshotNote(c.r)
		if !strings.HasPrefix(got, c.want) || (c.want == "" && got != "") || strings.Contains(got, "  ") {
			t.Errorf("SnapshotNote(%+v) = %q, want %q", c.r, got, c.want)
		}
	}

	ctx := context.Background()
	st := stagetest.Store(t)
	id, _ := stagetest.Review(t, st, config.Default(), review.StageReport,
		[]stagetest.File{{Path: "a.go", Content: "package a\n", Changed: []int{1}}}, nil)
	if err := st.SetSnapshotFallback(ctx, id, blank); err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(ctx, st, id)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := report.Render(rep)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored.Markdown, "work tree  is") || !strings.Contains(stored.Markdown, "diff alone") {
		t.Errorf("the note names a blank path:\n%s", stored.Markdown)
	}
}
