package evaluation

import (
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/dataset"
)

// A label that is not a reviewfleet risk type is counted under its own name
// and listed as one the project does not use.
func TestForeignLabelsAreCountedAndListed(t *testing.T) {
	c, err := dataset.DecodeCase([]byte(`{"name": "a", "diff": "x.patch", "purpose": "p", "golden": [
		{"file": "a.go", "line": 1, "text": "t", "risk_type": " Security "},
		{"file": "a.go", "line": 9, "text": "u", "risk_type": "CONCURRENCY"},
		{"text": "v", "risk_type": "data-loss"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	findings := []Finding{{File: "a.go", StartLine: 1, EndLine: 1, RiskType: "authorization"},
		{File: "b.go", StartLine: 1, EndLine: 1, RiskType: "robustness"}}
	m := MatchWindow(findings, c.Golden, 3)
	r := Run{ID: "r", Cases: []CaseResult{Evaluate(c, findings, m, 0, Usage{})}}
	r.Sum()
	per := r.Totals.PerRiskType
	if per["Security"].TP != 1 || per["data-loss"].FN != 1 || per["concurrency"].FN != 1 || per["robustness"].FP != 1 {
		t.Errorf("per label %+v", per)
	}
	if got := strings.Join(r.Totals.ForeignLabels, ","); got != "Security,data-loss" {
		t.Errorf("foreign labels %q", got)
	}
	var b strings.Builder
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| Security | 1 | 0 | 0 |") || !strings.Contains(b.String(), "reviewfleet does not use: Security, data-loss.") {
		t.Errorf("markdown:\n%s", b.String())
	}
}
