package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

// The demo's report says why each finding below the threshold is there, in
// the Markdown and the JSON, and its JSON has no long floats, no 0 for an
// absent link and no stop reason that contradicts the expert's verdict.
func TestDemoReportSaysWhy(t *testing.T) {
	t.Parallel()
	env := testEnv{}
	env["DATABASE_URL"] = testenv.IsolatedSchema(t)
	env["REVIEWFLEET_EXPERT_SNAPSHOT_DIR"] = t.TempDir()
	out, stderr, err := runEnv(t, env, "review", "--demo", "--format", "json", "--quiet")
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	var doc struct {
		ReviewID       string           `json:"review_id"`
		Findings       []map[string]any `json:"findings"`
		BelowThreshold []map[string]any `json:"below_threshold"`
		Dropped        []map[string]any `json:"dropped"`
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.BelowThreshold) == 0 {
		t.Fatalf("the demo has no finding below the threshold to explain:\n%s", out)
	}
	verdicts := map[string][]string{
		"accepted": {"confirmed", "refuted"}, "inconclusive": {"inconclusive"}, "accept_check_failed": {"inconclusive"},
		"repeat_cycle": {"inconclusive"}, "missing_completion_signal": {"inconclusive"}, "budget_exhausted": {"inconclusive"},
		"timeout": {"failed"}, "error": {"failed"},
	}
	all := slices.Concat(doc.Findings, doc.BelowThreshold, doc.Dropped)
	for _, f := range all {
		if f["merged_into"] != nil && f["status"] != "merged" {
			t.Errorf("finding %v: merged_into %v but status %v", f["number"], f["merged_into"], f["status"])
		}
		if x, ok := f["expert"].(map[string]any); ok {
			for _, v := range f["trail"].([]any) {
				v := v.(map[string]any)
				if v["stage"] == "expert" && !slices.Contains(verdicts[x["stop_reason"].(string)], v["verdict"].(string)) {
					t.Errorf("finding %v: stop_reason %v next to expert verdict %v", f["number"], x["stop_reason"], v["verdict"])
				}
			}
		}
	}
	// Every number, anywhere, has at most three decimals.
	tokens := json.NewDecoder(strings.NewReader(out))
	tokens.UseNumber()
	for {
		tok, err := tokens.Token()
		if err != nil {
			break
		}
		if n, ok := tok.(json.Number); ok {
			if _, frac, ok := strings.Cut(n.String(), "."); ok && len(frac) > 3 {
				t.Errorf("number %s in the JSON report", n)
			}
		}
	}
	for _, f := range doc.BelowThreshold {
		why, ok := f["below_threshold_reason"].(map[string]any)
		if !ok || why["stage"] == "" || why["kind"] == "" || why["detail"] == "" {
			t.Errorf("below-threshold finding %v has no reason: %v", f["number"], f["below_threshold_reason"])
		}
	}
	if bytes.Contains([]byte(out), []byte(`"merged_into": 0`)) {
		t.Error("a merged_into of 0")
	}

	md, _, err := runEnv(t, env, "report", doc.ReviewID)
	if err != nil {
		t.Fatal(err)
	}
	_, below, _ := strings.Cut(md, "## Below threshold")
	if n := strings.Count(below, "**Why below 0.60:**"); n != len(doc.BelowThreshold) {
		t.Errorf("%d reasons for %d findings below the threshold:\n%s", n, len(doc.BelowThreshold), md)
	}
	for _, f := range doc.BelowThreshold {
		why := f["below_threshold_reason"].(map[string]any)
		if !strings.Contains(below, "**Why below 0.60:** "+why["stage"].(string)+": ") {
			t.Errorf("the Markdown does not name the %s stage", why["stage"])
		}
	}
}
