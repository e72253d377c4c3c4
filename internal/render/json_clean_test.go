package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// expertVerdicts is the contract between an expert run's stop reason and
// the expert verdict of the trail (SCHEMA.md, "Expert run").
var expertVerdicts = map[string][]string{
	"accepted":                  {review.VerdictConfirmed, review.VerdictRefuted},
	"inconclusive":              {review.VerdictInconclusive},
	"accept_check_failed":       {review.VerdictInconclusive},
	"repeat_cycle":              {review.VerdictInconclusive},
	"missing_completion_signal": {review.VerdictInconclusive},
	"budget_exhausted":          {review.VerdictInconclusive},
	"timeout":                   {review.VerdictFailed},
	"error":                     {review.VerdictFailed},
}

// checkCleanJSON fails t on every problem jsonProblems finds.
func checkCleanJSON(t *testing.T, data []byte) {
	t.Helper()
	for _, p := range jsonProblems(data) {
		t.Error(p)
	}
}

// jsonProblems parses a JSON report and lists what a reader would stumble
// on: a number with more than three decimals (cost_usd, dollars,
// excepted), a link to another finding written as 0 instead of null, and
// an expert stop reason that contradicts the expert's verdict.
func jsonProblems(data []byte) []string {
	var problems []string
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return []string{"report is not JSON: " + err.Error()}
	}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case json.Number:
			if _, frac, ok := strings.Cut(v.String(), "."); ok && len(frac) > 3 && key != "cost_usd" {
				errorf("%s = %s: more than three decimals", key, v)
			}
		case map[string]any:
			for k, child := range v {
				walk(k, child)
			}
		case []any:
			for _, child := range v {
				walk(key, child)
			}
		}
	}
	walk("", doc)
	for _, list := range []string{"findings", "below_threshold", "dropped", "resolved"} {
		items, _ := doc[list].([]any)
		for _, it := range items {
			f := it.(map[string]any)
			for _, link := range []string{"merged_into", "carried_from"} {
				v, ok := f[link]
				if !ok {
					errorf("%s finding %v has no %s", list, f["number"], link)
				}
				if n, isNum := v.(json.Number); isNum && n.String() == "0" {
					errorf("%s finding %v: %s is 0, want null for none", list, f["number"], link)
				}
			}
			if f["status"] == string(review.StatusMerged) && f["merged_into"] == nil {
				errorf("%s finding %v is merged into nothing", list, f["number"])
			}
			x, _ := f["expert"].(map[string]any)
			if x == nil {
				continue
			}
			stop, _ := x["stop_reason"].(string)
			for _, v := range f["trail"].([]any) {
				v := v.(map[string]any)
				if v["stage"] != "expert" {
					continue
				}
				if allowed, ok := expertVerdicts[stop]; !ok || !slices.Contains(allowed, v["verdict"].(string)) {
					errorf("%s finding %v: expert stop_reason %q next to verdict %q", list, f["number"], stop, v["verdict"])
				}
			}
		}
	}
	return problems
}

// The JSON report rounds what arithmetic leaves (0.8 × 0.1), writes null
// for links that are absent, and never pairs a stop reason with a verdict
// it contradicts, even for runs stored under the older meaning of
// "accepted".
func TestJSONIsClean(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	r.Threshold = 0.1 * 6 // 0.6000000000000001
	r.Usage.Cost = 0.1 + 0.2
	legacy := Finding{
		Finding: review.Finding{ID: 21, RiskType: review.Intent, File: "cache/cache.go", LineStart: 35, LineEnd: 35,
			Severity: review.Low, Confidence: 0.8 * 0.1, Status: review.StatusActive, Description: "negative ttl", CarriedFrom: 4},
		Trail: []Verdict{
			{Stage: "verify", Verdict: "anchored", ConfidenceBefore: 0.7, ConfidenceAfter: 0.7},
			{Stage: "expert", Verdict: "inconclusive", ConfidenceBefore: 0.7, ConfidenceAfter: 0.1},
			{Stage: "eval", Verdict: "uncertain", ConfidenceBefore: 0.1, ConfidenceAfter: 0.8 * 0.1},
		},
		// Stored before a submitted inconclusive verdict had its own stop reason.
		Expert: &ExpertRun{StopReason: "accepted", Rounds: 2, ToolCalls: 2},
	}
	r.BelowThreshold = append(r.BelowThreshold, legacy)
	r.Findings[0].Confidence = 0.85 * 0.8 // 0.6800000000000002 before rounding
	data, err := JSON(r)
	if err != nil {
		t.Fatal(err)
	}
	checkCleanJSON(t, data)

	for _, want := range []string{`"confidence": 0.08,`, `"confidence": 0.68,`, `"threshold": 0.6,`, `"merged_into": 7,`, `"carried_from": 4,`, `"merged_into": null,`, `"stop_reason": "inconclusive"`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("JSON lacks %s", want)
		}
	}
	back, err := DecodeJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Dropped[1].MergedInto != 7 || back.Dropped[0].MergedInto != 0 || back.BelowThreshold[1].CarriedFrom != 4 {
		t.Errorf("links decoded as merged %d/%d, carried %d", back.Dropped[1].MergedInto, back.Dropped[0].MergedInto, back.BelowThreshold[1].CarriedFrom)
	}
	if md := Markdown(r); !strings.Contains(md, "(0.08)") || strings.Contains(md, "0.0800") {
		t.Errorf("Markdown confidence not rounded:\n%s", md)
	}
	sarif, err := SARIF(r)
	if err != nil {
		t.Fatal(err)
	}
	checkDecimals(t, sarif)
}

// A report of an earlier version, with 0 for "no link", reads the same.
func TestDecodeJSONReadsZeroLinks(t *testing.T) {
	t.Parallel()
	r, err := DecodeJSON([]byte(`{"schema_version":1,"dropped":[{"id":3,"status":"dropped","merged_into":0,"carried_from":0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Dropped[0].MergedInto != 0 || r.Dropped[0].CarriedFrom != 0 {
		t.Errorf("links = %d, %d", r.Dropped[0].MergedInto, r.Dropped[0].CarriedFrom)
	}
	data, err := JSON(r)
	if err != nil {
		t.Fatal(err)
	}
	checkCleanJSON(t, data)
}

// The checker itself catches what it is there to catch.
func TestCheckCleanJSONCatchesProblems(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"long float": `{"findings":[{"number":1,"confidence":0.08000000000000002,"merged_into":null,"carried_from":null,"trail":[]}]}`,
		"zero link":  `{"dropped":[{"number":1,"merged_into":0,"carried_from":null,"trail":[]}]}`,
		"accepted but inconclusive": `{"below_threshold":[{"number":1,"merged_into":null,"carried_from":null,
			"trail":[{"stage":"expert","verdict":"inconclusive"}],"expert":{"stop_reason":"accepted"}}]}`,
	} {
		if len(jsonProblems([]byte(doc))) == 0 {
			t.Errorf("%s: not caught", name)
		}
	}
}

// checkDecimals fails on any number with more than three decimals.
func checkDecimals(t *testing.T, data []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if n, ok := tok.(json.Number); ok {
			if _, frac, ok := strings.Cut(n.String(), "."); ok && len(frac) > 3 {
				t.Errorf("number %s has more than three decimals", n)
			}
		}
	}
}
