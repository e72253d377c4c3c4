package agent

import (
	"strings"
	"testing"
)

func TestParseVerdict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  string
		errs []string // substrings of the error, none for success
	}{
		{"minimal refutation", `{"verdict":"refuted","confidence":0.7,"reasoning":"guarded","evidence":[]}`, nil},
		{"case and space", `{"verdict":" Inconclusive ","confidence":0,"reasoning":"r","evidence":[]}`, nil},
		{"confirmed with evidence", `{"verdict":"confirmed","confidence":1,"reasoning":"r","evidence":[{"kind":"tool_fact","match":"abc"}]}`, nil},
		{"not json", `{"verdict":`, []string{"not valid JSON"}},
		{"trailing data", `{"verdict":"refuted","confidence":0.5,"reasoning":"r"} {}`, []string{"unexpected data"}},
		{"wrong type", `{"verdict":"refuted","confidence":"0.5","reasoning":"r"}`, []string{"confidence must be a number, not string"}},
		{"unknown field", `{"verdict":"refuted","confidence":0.5,"reasoning":"r","summary":"s"}`, []string{`unknown field "summary"`}},
		{"everything wrong", `{"verdict":"maybe","confidence":1.5,"evidence":[{"kind":"guess"}]}`,
			[]string{"verdict must be", "confidence must be between 0 and 1", "reasoning is missing", "evidence[0]: kind must be"}},
		{"missing confidence", `{"verdict":"refuted","reasoning":"r"}`, []string{"confidence is missing"}},
		{"confirmed without required evidence", `{"verdict":"confirmed","confidence":0.8,"reasoning":"r","evidence":[{"kind":"file_exists","path":"a","required":false}]}`,
			[]string{"needs at least one required evidence item"}},
		{"evidence problems", `{"verdict":"refuted","confidence":0.5,"reasoning":"r","evidence":[
			{"kind":"file_exists"},
			{"kind":"content_contains","path":"a","match":" x "},
			{"kind":"content_contains","path":"a","match":"abc","start_line":5,"end_line":2},
			{"kind":"content_contains","path":"a","match":"abc","end_line":2},
			{"kind":"tool_fact"}]}`,
			[]string{"evidence[0]: file_exists needs a path", "evidence[1]: content_contains needs a match of at least 3", "evidence[2]: end_line is before start_line", "evidence[3]: end_line needs a start_line", "evidence[4]: tool_fact needs a match"}},
		{"too much evidence", `{"verdict":"refuted","confidence":0.5,"reasoning":"r","evidence":[` + strings.Repeat(`{"kind":"tool_fact","match":"abc"},`, 20) + `{"kind":"tool_fact","match":"abc"}]}`,
			[]string{"at most 20 evidence items"}},
	}
	for _, tt := range tests {
		sub, err := parseVerdict(tt.raw)
		if len(tt.errs) == 0 {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			} else if sub.verdict == "" || sub.reasoning == "" {
				t.Errorf("%s: incomplete submission %+v", tt.name, sub)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted", tt.name)
			continue
		}
		for _, e := range tt.errs {
			if !strings.Contains(err.Error(), e) {
				t.Errorf("%s: error %q lacks %q", tt.name, err, e)
			}
		}
	}
}

func TestParseVerdictRequiredDefault(t *testing.T) {
	t.Parallel()
	sub, err := parseVerdict(`{"verdict":"Confirmed","confidence":0.6,"reasoning":" r ","evidence":[
		{"kind":"FILE_EXISTS","path":" a.go "},{"kind":"tool_fact","match":"abc","required":false}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if sub.verdict != "confirmed" || sub.confidence != 0.6 || sub.reasoning != "r" {
		t.Errorf("submission = %+v", sub)
	}
	want := []Check{{Kind: CheckFileExists, Path: "a.go", Required: true}, {Kind: CheckToolFact, Match: "abc", Required: false}}
	if len(sub.evidence) != 2 || sub.evidence[0] != want[0] || sub.evidence[1] != want[1] {
		t.Errorf("evidence = %+v, want %+v", sub.evidence, want)
	}
}
