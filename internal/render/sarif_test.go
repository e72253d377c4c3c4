package render

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// sarifProblems checks the parts of SARIF 2.1.0 that consumers rely on and
// returns what is wrong, or nothing.
func sarifProblems(data []byte) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	var log struct {
		Schema  *string `json:"$schema"`
		Version *string `json:"version"`
		Runs    []struct {
			Tool *struct {
				Driver *struct {
					Name           string `json:"name"`
					InformationURI string `json:"informationUri"`
					Version        string `json:"version"`
					Rules          []struct {
						ID               string `json:"id"`
						ShortDescription *struct {
							Text string `json:"text"`
						} `json:"shortDescription"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex *int   `json:"ruleIndex"`
				Level     string `json:"level"`
				Message   *struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []struct {
					PhysicalLocation *struct {
						ArtifactLocation *struct {
							URI       string `json:"uri"`
							URIBaseID string `json:"uriBaseId"`
						} `json:"artifactLocation"`
						Region *struct {
							StartLine *int `json:"startLine"`
							EndLine   *int `json:"endLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				PartialFingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	if log.Schema == nil || !strings.Contains(*log.Schema, "sarif") {
		bad("$schema missing or not a SARIF schema")
	}
	if log.Version == nil || *log.Version != "2.1.0" {
		bad("version is not 2.1.0")
	}
	if len(log.Runs) != 1 {
		bad("%d runs, want 1", len(log.Runs))
		return problems
	}
	run := log.Runs[0]
	if run.Tool == nil || run.Tool.Driver == nil {
		bad("run has no tool.driver")
		return problems
	}
	d := run.Tool.Driver
	if d.Name == "" || d.Version == "" {
		bad("driver name %q or version %q empty", d.Name, d.Version)
	}
	if u, err := url.Parse(d.InformationURI); err != nil || !u.IsAbs() {
		bad("informationUri %q is not an absolute URI", d.InformationURI)
	}
	rules := make(map[string]int)
	for i, r := range d.Rules {
		if r.ID == "" || r.ShortDescription == nil || r.ShortDescription.Text == "" {
			bad("rule %d lacks id or shortDescription", i)
		}
		if _, dup := rules[r.ID]; dup {
			bad("rule id %q repeated", r.ID)
		}
		rules[r.ID] = i
	}
	if run.Results == nil {
		bad("results missing")
	}
	levels := map[string]bool{"none": true, "note": true, "warning": true, "error": true}
	for i, res := range run.Results {
		idx, ok := rules[res.RuleID]
		if !ok {
			bad("result %d ruleId %q matches no rule", i, res.RuleID)
		}
		if res.RuleIndex != nil && *res.RuleIndex != idx {
			bad("result %d ruleIndex %d, rule %q is at %d", i, *res.RuleIndex, res.RuleID, idx)
		}
		if !levels[res.Level] {
			bad("result %d level %q", i, res.Level)
		}
		if res.Message == nil || res.Message.Text == "" {
			bad("result %d has no message text", i)
		}
		if len(res.Locations) == 0 || res.Locations[0].PhysicalLocation == nil ||
			res.Locations[0].PhysicalLocation.ArtifactLocation == nil || res.Locations[0].PhysicalLocation.Region == nil {
			bad("result %d lacks a physical location with artifact and region", i)
			continue
		}
		pl := res.Locations[0].PhysicalLocation
		u, err := url.Parse(pl.ArtifactLocation.URI)
		if pl.ArtifactLocation.URI == "" || err != nil || u.IsAbs() || strings.HasPrefix(u.Path, "/") {
			bad("result %d uri %q is not a relative URI reference", i, pl.ArtifactLocation.URI)
		}
		if pl.ArtifactLocation.URIBaseID != "%SRCROOT%" {
			bad("result %d uriBaseId %q", i, pl.ArtifactLocation.URIBaseID)
		}
		rg := pl.Region
		if rg.StartLine == nil || *rg.StartLine < 1 {
			bad("result %d startLine missing or < 1", i)
		} else if rg.EndLine == nil || *rg.EndLine < *rg.StartLine {
			bad("result %d endLine missing or before startLine", i)
		}
		if len(res.PartialFingerprints) == 0 {
			bad("result %d has no partialFingerprints", i)
		}
		for k, v := range res.PartialFingerprints {
			if k == "" || v == "" {
				bad("result %d has an empty fingerprint entry", i)
			}
		}
	}
	return problems
}

func TestSarifCheckerCatchesProblems(t *testing.T) {
	t.Parallel()
	broken := `{"version":"2.0.0","runs":[{"tool":{"driver":{"name":"x","version":"1","informationUri":"nope",
	  "rules":[{"id":"a","shortDescription":{"text":"A"}}]}},
	  "results":[{"ruleId":"b","level":"fatal","message":{"text":""},
	    "locations":[{"physicalLocation":{"artifactLocation":{"uri":"/abs/x.go","uriBaseId":"%SRCROOT%"},"region":{"startLine":5,"endLine":4}}}]}]}]}`
	got := strings.Join(sarifProblems([]byte(broken)), "\n")
	for _, want := range []string{"$schema", "version", "informationUri", "matches no rule", "level", "message", "relative", "endLine", "partialFingerprints"} {
		if !strings.Contains(got, want) {
			t.Errorf("checker missed the %s problem; it reported:\n%s", want, got)
		}
	}
}

func TestSARIFStructure(t *testing.T) {
	t.Parallel()
	reports := map[string]*Report{
		"sample": sampleReport(),
		"empty":  {},
		"odd": {Findings: []Finding{
			{Finding: review.Finding{ID: 1, RiskType: "style", Severity: "nit", File: "./c:d/e f.go", LineStart: 0, LineEnd: 0}},
			{Finding: review.Finding{ID: 2, RiskType: review.Static, Severity: review.Info, File: "x.go", LineStart: 9, LineEnd: 3}},
		}},
	}
	for name, r := range reports {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := SARIF(r)
			if err != nil {
				t.Fatalf("SARIF: %v", err)
			}
			for _, p := range sarifProblems(data) {
				t.Error(p)
			}
		})
	}
}

func TestSARIFContent(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	data, err := SARIF(r)
	if err != nil {
		t.Fatalf("SARIF: %v", err)
	}
	var log sarifLog
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if run.Tool.Driver.Version != "0.3.0" || run.Tool.Driver.Name != "reviewfleet" {
		t.Errorf("driver = %+v", run.Tool.Driver)
	}
	var ruleIDs []string
	for _, rule := range run.Tool.Driver.Rules {
		ruleIDs = append(ruleIDs, rule.ID)
	}
	// Only the risk types of reported findings, in the canonical order.
	if got := strings.Join(ruleIDs, ","); got != "robustness,concurrency,authorization" {
		t.Errorf("rules = %s", got)
	}
	if len(run.Results) != len(r.Findings) {
		t.Fatalf("%d results for %d findings", len(run.Results), len(r.Findings))
	}
	for i, res := range run.Results {
		f := r.Findings[i]
		if res.RuleID != string(f.RiskType) || res.Level != sarifLevel(f.Severity) {
			t.Errorf("result %d: rule %s level %s for %s/%s", i, res.RuleID, res.Level, f.RiskType, f.Severity)
		}
		if !strings.HasPrefix(res.Message.Text, f.Description) {
			t.Errorf("result %d message %q does not start with the description", i, res.Message.Text)
		}
		if f.Suggestion != "" && !strings.HasSuffix(res.Message.Text, "Suggestion: "+f.Suggestion) {
			t.Errorf("result %d message %q lacks the suggestion", i, res.Message.Text)
		}
		reg := res.Locations[0].PhysicalLocation.Region
		if reg.StartLine != f.LineStart || reg.EndLine != f.LineEnd {
			t.Errorf("result %d region %+v, finding lines %d-%d", i, reg, f.LineStart, f.LineEnd)
		}
		if res.PartialFingerprints[fingerprintKey] != Fingerprint(f.Finding) {
			t.Errorf("result %d fingerprint %v", i, res.PartialFingerprints)
		}
		if res.Properties.FindingID != f.ID || res.Properties.Confidence != f.Confidence || res.Properties.Severity != string(f.Severity) {
			t.Errorf("result %d properties %+v", i, res.Properties)
		}
	}
	if got := run.Results[2].Locations[0].PhysicalLocation.ArtifactLocation.URI; got != "api/refund%20handler.go" {
		t.Errorf("uri = %q, want the space percent-encoded", got)
	}
	var trail []string
	for _, v := range run.Results[0].Properties.Trail {
		trail = append(trail, v.Stage+":"+v.Verdict)
	}
	if got := strings.Join(trail, ","); got != "verify:anchored,expert:confirmed,eval:confirmed" {
		t.Errorf("trail = %s", got)
	}
	if _, err := SARIF(nil); err == nil {
		t.Error("SARIF(nil) succeeded")
	}
}

func TestSARIFLevel(t *testing.T) {
	t.Parallel()
	tests := map[review.Severity]string{
		review.Critical: "error", review.High: "error", review.Medium: "warning",
		review.Low: "note", review.Info: "note", "": "warning", "bogus": "warning",
	}
	for sev, want := range tests {
		if got := sarifLevel(sev); got != want {
			t.Errorf("sarifLevel(%q) = %q, want %q", sev, got, want)
		}
	}
}

func TestSARIFOddLocations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file             string
		start, end       int
		uri              string
		wantStart, wantE int
	}{
		{"a.go", 9, 3, "a.go", 3, 9},
		{"a.go", 0, 0, "a.go", 1, 1},
		{"./dir/a b#c.go", 2, 2, "dir/a%20b%23c.go", 2, 2},
		{"c:d.go", 4, 4, "./c:d.go", 4, 4},
	}
	for _, tt := range tests {
		res := resultFor(Finding{Finding: review.Finding{File: tt.file, LineStart: tt.start, LineEnd: tt.end, RiskType: review.Static}}, 0)
		pl := res.Locations[0].PhysicalLocation
		if pl.ArtifactLocation.URI != tt.uri || pl.Region.StartLine != tt.wantStart || pl.Region.EndLine != tt.wantE {
			t.Errorf("%q %d-%d → %q %d-%d, want %q %d-%d", tt.file, tt.start, tt.end,
				pl.ArtifactLocation.URI, pl.Region.StartLine, pl.Region.EndLine, tt.uri, tt.wantStart, tt.wantE)
		}
		if res.Message.Text == "" {
			t.Errorf("%q: empty message for a finding without a description", tt.file)
		}
	}
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	base := review.Finding{File: "a/b.go", RiskType: review.Robustness, Description: "Nil map write.", LineStart: 10, LineEnd: 12}
	same := []func(*review.Finding){
		func(f *review.Finding) { f.LineStart, f.LineEnd = 50, 51 },
		func(f *review.Finding) { f.Description = "  nil MAP write " },
		func(f *review.Finding) { f.File = "./a/b.go" },
		func(f *review.Finding) { f.ID, f.Confidence, f.Severity = 99, 0.1, review.Low },
	}
	different := []func(*review.Finding){
		func(f *review.Finding) { f.File = "a/c.go" },
		func(f *review.Finding) { f.RiskType = review.Concurrency },
		func(f *review.Finding) { f.Description = "nil map read" },
		// The separator keeps field boundaries: moving text between fields changes the hash.
		func(f *review.Finding) { f.File, f.RiskType = "a/b.gorobustness", "" },
	}
	want := Fingerprint(base)
	if len(want) != 32 {
		t.Errorf("fingerprint %q is not 32 hex characters", want)
	}
	for i, change := range same {
		f := base
		change(&f)
		if got := Fingerprint(f); got != want {
			t.Errorf("same-identity change %d altered the fingerprint", i)
		}
	}
	for i, change := range different {
		f := base
		change(&f)
		if got := Fingerprint(f); got == want {
			t.Errorf("identity change %d kept the fingerprint", i)
		}
	}
}
