package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
)

// TestMarkersReviewerReportsMarkedLines runs the drill reviewer of
// cmd/fakellm through every stage: the marked line must come out of the
// report as a finding.
func TestMarkersReviewerReportsMarkedLines(t *testing.T) {
	t.Parallel()
	change := "diff --git a/calc/div.go b/calc/div.go\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/calc/div.go\n@@ -0,0 +1,5 @@\n" +
		"+package calc\n+\n+func Div(a, b int) int {\n+\treturn a / b // BUG: b may be zero\n+}\n"
	name := filepath.Join(t.TempDir(), "change.diff")
	if err := os.WriteFile(name, []byte(change), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFleet(t, llmfake.Markers(""), nil)
	r := f.review(t, submit.Request{Origin: submit.FromOperator, DiffFile: name})
	if r.Status != review.ReviewDone {
		t.Fatalf("status %s: %s", r.Status, r.Error)
	}
	findings, err := f.sub.Store.ListFindings(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := f.sub.Store.GetReport(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range findings {
		t.Logf("finding %s:%d %s conf %.2f", fd.File, fd.LineStart, fd.Description, fd.Confidence)
	}
	if !contains(string(rep.JSON), `"calc/div.go"`) || !contains(string(rep.JSON), `"line_start": 4`) {
		t.Fatalf("the report has no finding at calc/div.go:4:\n%s", rep.Markdown)
	}
}
