package report_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/stages/report"
	"github.com/reviewfleet/reviewfleet/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

func TestBuildKeepsOnlyReportableFindings(t *testing.T) {
	t.Parallel()
	st := stagetest.Store(t)
	cfg := config.Default()
	cfg.Harness.ConfidenceOverrides = map[string]float64{"static": 0.95}
	id, fs := stagetest.Review(t, st, cfg, review.StageReport,
		[]stagetest.File{{Path: "a.go", Content: "package a\n\nfunc f() {}\n", Changed: []int{3}}},
		[]review.Finding{
			{RiskType: review.Robustness, File: "a.go", LineStart: 3, LineEnd: 3, Description: "real", Severity: review.High, Confidence: 0.9},
			{RiskType: review.Robustness, File: "a.go", LineStart: 7, LineEnd: 8, Description: "outside the file", Severity: review.Critical, Confidence: 0.99},
			{RiskType: review.Static, File: "a.go", LineStart: 3, LineEnd: 3, Description: "below its override", Severity: review.Low, Confidence: 0.9},
			{RiskType: review.Intent, File: "a.go", LineStart: 1, LineEnd: 1, Description: "weak", Severity: review.Low, Confidence: 0.2},
		})
	rep, err := report.Build(context.Background(), st, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].ID != fs[0].ID || len(rep.Findings[0].Code) == 0 {
		t.Fatalf("reported: %+v", rep.Findings)
	}
	if len(rep.BelowThreshold) != 2 {
		t.Errorf("below threshold: %+v", rep.BelowThreshold)
	}
	if len(rep.Dropped) != 1 || !strings.HasPrefix(rep.Dropped[0].DropReason, report.ReasonLineOutOfRange) {
		t.Errorf("dropped: %+v", rep.Dropped)
	}
	stored, err := report.Render(rep)
	if err != nil || !strings.Contains(stored.Markdown, "real") || len(stored.SARIF) == 0 || len(stored.JSON) == 0 {
		t.Fatalf("render: %v", err)
	}
}

func TestBuildNotesSnapshotFallback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	id, _ := stagetest.Review(t, st, config.Default(), review.StageReport,
		[]stagetest.File{{Path: "a.go", Content: "package a\n", Changed: []int{1}}}, nil)
	const reason = "fetch 0123abc from https://example.com/r.git: server unreachable"
	if err := st.SetSnapshotFallback(ctx, id, reason); err != nil {
		t.Fatal(err)
	}
	if err := st.SetSnapshotFallback(ctx, id, "a later reason"); err != nil {
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
	if !strings.Contains(stored.Markdown, reason) || strings.Contains(stored.Markdown, "a later reason") {
		t.Errorf("the report does not note the first fallback reason:\n%s", stored.Markdown)
	}
}

// An interrupted review's report says so and lists what did not run, not
// its unchecked findings as if the review were complete.
func TestBuildInterruptedReviewListsWhatDidNotRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	id, fs := stagetest.Review(t, st, config.Default(), review.StageExpert,
		[]stagetest.File{{Path: "a.go", Content: "package a\n\nfunc f() {}\n", Changed: []int{3}}},
		[]review.Finding{{RiskType: review.Robustness, File: "a.go", LineStart: 3, LineEnd: 3, Description: "unchecked", Severity: review.High, Confidence: 0.9}})
	if _, err := st.FailReview(ctx, id, render.InterruptedPrefix+"stopped with Ctrl-C"); err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(ctx, st, id)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted || rep.StoppedAt != "expert" || len(rep.NotRun) != 1 || rep.NotRun[0].ItemKey != pipeline.FindingKey(fs[0].ID) {
		t.Fatalf("interrupted %v at %q, not run %+v", rep.Interrupted, rep.StoppedAt, rep.NotRun)
	}
	if strings.Join(rep.StagesNotRun, ",") != "eval,report" {
		t.Errorf("stages not run: %v", rep.StagesNotRun)
	}
	md := render.Markdown(rep)
	for _, want := range []string{"**INTERRUPTED:**", "during the expert stage", "did not run: 1 item", "stages never reached: eval, report"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

// A finding that cites a whole large file keeps the stored report small.
func TestBuildLargeFileReportStaysSmall(t *testing.T) {
	t.Parallel()
	st := stagetest.Store(t)
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "var v%d = %q\n", i, strings.Repeat("x", 150))
	}
	id, _ := stagetest.Review(t, st, config.Default(), review.StageReport,
		[]stagetest.File{{Path: "big.go", Content: b.String(), Changed: []int{1}}},
		[]review.Finding{{RiskType: review.Robustness, File: "big.go", LineStart: 1, LineEnd: 5000, Description: "the whole file", Severity: review.High, Confidence: 0.9}})
	rep, err := report.Build(context.Background(), st, id)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := report.Render(rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.Markdown) > 16<<10 || len(stored.JSON) > 16<<10 {
		t.Fatalf("Markdown %d bytes, JSON %d bytes for one finding", len(stored.Markdown), len(stored.JSON))
	}
	if !strings.Contains(stored.Markdown, "more lines not shown") || !strings.Contains(string(stored.JSON), `"code_note"`) {
		t.Errorf("the report does not say what was cut")
	}
}

// A large review drops most of what intent raised: those findings are
// listed with their location and reason, without excerpts, so the report
// stays small.
func TestBuildDroppedFindingsCarryNoCode(t *testing.T) {
	t.Parallel()
	st := stagetest.Store(t)
	ctx := context.Background()
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "func F%d(x int) int { return x * %d } // %s\n", i, i, strings.Repeat("y", 80))
	}
	var fs []review.Finding
	for i := range 300 {
		fs = append(fs, review.Finding{RiskType: review.Robustness, File: "a.go", LineStart: i + 1, LineEnd: i + 1,
			Description: fmt.Sprintf("finding %d", i), Severity: review.High, Confidence: 0.9})
	}
	c := b.String()
	id, err := st.CreateReview(ctx, review.NewReview{Repo: "/repo", Source: "diff", IntentMode: "per_file", Timeout: time.Hour,
		Config: pipeline.Snapshot(config.Default()), Items: []review.Item{{Stage: review.StageIntent, Key: "p1", Payload: json.RawMessage(`{}`)}},
		Files: []review.File{{Path: "a.go", Change: "modified", ChangedLines: []int{1}, Content: &c}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.FinishIntentItem(ctx, id, "p1", fs); err != nil {
		t.Fatal(err)
	}
	stored, err := st.ListFindings(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// Triage keeps one and drops the rest; the review goes to its report.
	if _, err := st.Advance(ctx, id, review.StageIntent, review.StageReport, func(ctx context.Context, tx *store.Tx) ([]review.Item, error) {
		var ds []review.Triage
		for _, f := range stored[1:] {
			ds = append(ds, review.Triage{FindingID: f.ID, Status: review.StatusDropped, Reason: "cap_per_risk_type"})
		}
		return nil, tx.ApplyTriage(ctx, ds)
	}); err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(ctx, st, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Dropped) != 299 {
		t.Fatalf("%d dropped, want 299", len(rep.Dropped))
	}
	for _, f := range rep.Dropped {
		if len(f.Code) != 0 {
			t.Fatalf("dropped finding %d carries %d lines of code", f.ID, len(f.Code))
		}
	}
	out, err := report.Render(rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.JSON) > 160<<10 {
		t.Fatalf("JSON %d bytes for %d dropped findings", len(out.JSON), len(rep.Dropped))
	}
}

// A review that ran out of time in its expert stage: the report names the
// item that never finished with what held it back, the stages never
// reached, and where each finding stopped; it says nothing about an
// expert view of the tree, since no expert run happened.
func TestBuildDeadlineFailureSaysWhereFindingsStopped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	id, fs := stagetest.Review(t, st, config.Default(), review.StageExpert,
		[]stagetest.File{{Path: "a.go", Content: "package a\n\nfunc f() {}\n", Changed: []int{3}}},
		[]review.Finding{{RiskType: review.Robustness, File: "a.go", LineStart: 3, LineEnd: 3, Description: "unchecked", Severity: review.High, Confidence: 0.9}})
	key := pipeline.FindingKey(fs[0].ID)
	if err := st.StartItem(ctx, id, review.StageExpert, key); err != nil {
		t.Fatal(err)
	}
	if err := st.ReturnItem(ctx, id, review.StageExpert, key, "connect: connection refused", false); err != nil {
		t.Fatal(err)
	}
	if err := st.SetSnapshotFallback(ctx, id, "fetch abc: unreachable"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.FailReview(ctx, id, "review did not finish within 1m30s (stage expert)"); err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(ctx, st, id)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Interrupted || rep.StoppedAt != "expert" || strings.Join(rep.StagesNotRun, ",") != "eval,report" {
		t.Errorf("interrupted %v, stopped at %q, stages not run %v", rep.Interrupted, rep.StoppedAt, rep.StagesNotRun)
	}
	if len(rep.NotRun) != 1 || rep.NotRun[0].ItemKey != key || rep.NotRun[0].Error != "connect: connection refused" {
		t.Errorf("not run: %+v", rep.NotRun)
	}
	all := append(append([]render.Finding{}, rep.Findings...), rep.BelowThreshold...)
	if len(all) != 1 || all[0].StoppedAt != "intent" || strings.Join(all[0].MissedStages, ",") != "expert,eval" {
		t.Errorf("findings: %+v", all)
	}
	for _, n := range rep.Notes {
		if strings.Contains(n, "expert saw") {
			t.Errorf("a note about an expert run that never happened: %q", n)
		}
	}
}
