package render

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

func TestJSONRoundTrip(t *testing.T) {
	t.Parallel()
	orig := sampleReport()
	data, err := JSON(orig)
	if err != nil {
		t.Fatalf("JSON: %v", err)
	}
	back, err := DecodeJSON(data)
	if err != nil {
		t.Fatalf("DecodeJSON: %v", err)
	}
	again, err := JSON(back)
	if err != nil {
		t.Fatalf("JSON of decoded report: %v", err)
	}
	if !bytes.Equal(data, again) {
		t.Errorf("re-encoding changed the document:\n%s\nvs\n%s", data, again)
	}

	// What the decoder returns equals the original once the encoding's
	// normalisations are applied: UTC times, trails in stage order,
	// findings carrying the report's review ID.
	want := sampleReport()
	want.CreatedAt = want.CreatedAt.UTC()
	want.FinishedAt = want.FinishedAt.UTC()
	for _, list := range [][]Finding{want.Findings, want.BelowThreshold, want.Dropped} {
		for i := range list {
			list[i].ReviewID = want.ReviewID
			list[i].Trail = orderedTrail(list[i].Trail)
			for k := range list[i].Trail {
				list[i].Trail[k].Evidence = nonNil(list[i].Trail[k].Evidence)
			}
			list[i].Code = nonNil(list[i].Code)
			list[i].Trail = nonNil(list[i].Trail)
		}
	}
	// The reason a finding is below the threshold is decoded with it.
	for i, f := range want.BelowThreshold {
		why := WhyBelow(f, want.Threshold)
		want.BelowThreshold[i].Why = &why
	}
	if !reflect.DeepEqual(back, want) {
		t.Errorf("decoded report differs:\n got %+v\nwant %+v", back, want)
	}
}

func TestJSONShape(t *testing.T) {
	t.Parallel()
	for name, r := range map[string]*Report{"sample": sampleReport(), "empty": {}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := JSON(r)
			if err != nil {
				t.Fatalf("JSON: %v", err)
			}
			var doc map[string]any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatalf("output is not JSON: %v", err)
			}
			if doc["schema_version"] != float64(SchemaVersion) {
				t.Errorf("schema_version = %v", doc["schema_version"])
			}
			for _, key := range []string{"skipped_stages", "findings", "below_threshold", "dropped", "not_reviewed", "failed_items"} {
				if _, ok := doc[key].([]any); !ok {
					t.Errorf("%s = %#v, want an array", key, doc[key])
				}
			}
			if _, ok := doc["eval_summary"].(map[string]any); !ok {
				t.Errorf("eval_summary = %#v, want an object", doc["eval_summary"])
			}
			walk(t, "", doc)
		})
	}
}

// nullable lists the only keys whose value may be null.
var nullable = map[string]bool{"created_at": true, "finished_at": true, "expert": true,
	"merged_into": true, "carried_from": true, "below_threshold_reason": true}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// walk checks every key and value below v: snake_case keys, no nulls except
// the nullable keys, and times in RFC 3339 UTC.
func walk(t *testing.T, key string, v any) {
	t.Helper()
	switch v := v.(type) {
	case nil:
		if !nullable[key] {
			t.Errorf("%s is null", key)
		}
	case map[string]any:
		for k, child := range v {
			if !snakeCase.MatchString(k) {
				t.Errorf("key %q under %q is not snake_case", k, key)
			}
			walk(t, k, child)
		}
	case []any:
		for _, child := range v {
			walk(t, key, child)
		}
	case string:
		if strings.HasSuffix(key, "_at") {
			if _, err := time.Parse(time.RFC3339, v); err != nil || !strings.HasSuffix(v, "Z") {
				t.Errorf("%s = %q, want RFC 3339 UTC", key, v)
			}
		}
	}
}

func TestJSONValues(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	data, err := JSON(r)
	if err != nil {
		t.Fatalf("JSON: %v", err)
	}
	var doc jsonReport
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.CreatedAt == nil || *doc.CreatedAt != "2026-03-04T09:00:00Z" {
		t.Errorf("created_at = %v, want the CET time in UTC", doc.CreatedAt)
	}
	var stages []string
	for _, v := range doc.Findings[0].Trail {
		stages = append(stages, v.Stage)
	}
	if got := strings.Join(stages, ","); got != "verify,expert,eval" {
		t.Errorf("trail order = %s", got)
	}
	if m := doc.Dropped[1].MergedInto; m == nil || *m != 7 || doc.Dropped[1].Status != "merged" {
		t.Errorf("merged finding = %+v", doc.Dropped[1])
	}
	if doc.EvalSummary["robustness"].Disputed != 2 || doc.Usage.TokensIn != 1234567 {
		t.Errorf("summary or usage lost: %+v %+v", doc.EvalSummary, doc.Usage)
	}
	if !bytes.Contains(data, []byte(`<after>`)) {
		t.Error("HTML characters were escaped in JSON strings")
	}
	second, _ := JSON(sampleReport())
	if !bytes.Equal(data, second) {
		t.Error("two encodings of the same report differ")
	}
	var unset jsonReport
	emptyData, _ := JSON(&Report{})
	if err := json.Unmarshal(emptyData, &unset); err != nil || unset.CreatedAt != nil || unset.SchemaVersion != SchemaVersion {
		t.Errorf("empty report: created_at %v, schema_version %d, err %v", unset.CreatedAt, unset.SchemaVersion, err)
	}
}

func TestJSONErrors(t *testing.T) {
	t.Parallel()
	if _, err := JSON(nil); err == nil {
		t.Error("JSON(nil) succeeded")
	}
	r := sampleReport()
	r.Dropped[0].Confidence = math.NaN()
	if _, err := JSON(r); err == nil || !strings.Contains(err.Error(), "finding 12") {
		t.Errorf("NaN confidence: err = %v, want one naming finding 12", err)
	}
	r = sampleReport()
	r.SchemaVersion = 2
	if _, err := JSON(r); err == nil {
		t.Error("report of schema version 2 encoded as version 1")
	}
	r = sampleReport()
	r.Findings[0].Trail[0].ConfidenceAfter = math.Inf(1)
	if _, err := JSON(r); err == nil {
		t.Error("infinite verdict confidence encoded")
	}

	bad := map[string]string{
		"not JSON":         `{`,
		"no version":       `{"review_id":"x"}`,
		"future version":   `{"schema_version":2}`,
		"bad time":         `{"schema_version":1,"created_at":"yesterday"}`,
		"wrong value type": `{"schema_version":1,"findings":{}}`,
	}
	for name, doc := range bad {
		if _, err := DecodeJSON([]byte(doc)); err == nil {
			t.Errorf("DecodeJSON(%s) succeeded", name)
		}
	}
	r2, err := DecodeJSON([]byte(`{"schema_version":1,"unknown_key":true}`))
	if err != nil || r2.Findings == nil || r2.EvalSummary == nil {
		t.Errorf("minimal document: %+v, %v", r2, err)
	}
}

// TestSchemaDocumentsEveryKey keeps SCHEMA.md in step with the encoder.
func TestSchemaDocumentsEveryKey(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("SCHEMA.md")
	if err != nil {
		t.Fatal(err)
	}
	data, err := JSON(sampleReport())
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	keys := make(map[string]bool)
	collectKeys(v, "", keys)
	for k := range keys {
		if !bytes.Contains(doc, []byte("| `"+k+"` |")) {
			t.Errorf("SCHEMA.md does not document key %q", k)
		}
	}
	if len(keys) < 40 {
		t.Errorf("only %d keys collected; the sample report should exercise every object", len(keys))
	}
}

func collectKeys(v any, parent string, keys map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if parent != "eval_summary" { // keyed by risk type
				keys[k] = true
			}
			collectKeys(child, k, keys)
		}
	case []any:
		for _, child := range v {
			collectKeys(child, parent, keys)
		}
	}
}

func TestDecodeJSONOfHandWrittenDocument(t *testing.T) {
	t.Parallel()
	doc := `{"schema_version":1,"review_id":"r9","finished_at":null,"created_at":"2026-01-02T03:04:05+02:00",
	  "findings":[{"id":5,"risk_type":"static","severity":"critical","file":"x.go","line_start":1,"line_end":2,
	    "confidence":0.9,"status":"active","code":[{"line":1,"text":"x"}],"trail":null,"expert":{"stop_reason":"timeout","rounds":2,"tool_calls":1,"evidence":null}}],
	  "eval_summary":{"static":{"confirmed":1}}}`
	r, err := DecodeJSON([]byte(doc))
	if err != nil {
		t.Fatalf("DecodeJSON: %v", err)
	}
	if !r.CreatedAt.Equal(time.Date(2026, 1, 2, 1, 4, 5, 0, time.UTC)) || r.CreatedAt.Location() != time.UTC || !r.FinishedAt.IsZero() {
		t.Errorf("times = %v / %v", r.CreatedAt, r.FinishedAt)
	}
	f := r.Findings[0]
	if f.ReviewID != "r9" || f.Severity != review.Critical || f.Expert == nil || f.Expert.StopReason != "timeout" || f.Expert.Evidence == nil || f.Trail == nil {
		t.Errorf("finding = %+v, expert %+v", f, f.Expert)
	}
	if r.EvalSummary[review.Static].Confirmed != 1 {
		t.Errorf("eval summary = %+v", r.EvalSummary)
	}
}
