package agent

import (
	"strings"
	"testing"
)

func TestTextVerdict(t *testing.T) {
	t.Parallel()
	const refuted = `{"verdict":"refuted","confidence":0.7,"reasoning":"guarded by the caller","evidence":[]}`
	const confirmed = `{"verdict":"confirmed","confidence":0.8,"reasoning":"nil deref","evidence":[{"kind":"tool_fact","match":"a } in { code"}]}`
	tests := []struct {
		name      string
		text      string
		verdict   string // the accepted verdict, "" for none
		reasoning string
		found     bool
		errs      []string // substrings of the error when found without a verdict
	}{
		{"bare object", refuted, "refuted", "guarded by the caller", true, nil},
		{"json fence with prose", "Here it is:\n```json\n" + refuted + "\n```\nDone.", "refuted", "guarded by the caller", true, nil},
		{"plain fence", "```\n" + confirmed + "\n```", "confirmed", "nil deref", true, nil},
		{"unclosed fence", "```json\n" + refuted, "refuted", "guarded by the caller", true, nil},
		{"prose around", "I conclude " + confirmed + " and that is all.", "confirmed", "nil deref", true, nil},
		{"braces in prose before", "The map {id -> session} and {unbalanced, then " + refuted, "refuted", "guarded by the caller", true, nil},
		{"braces inside strings", `{"verdict":"refuted","confidence":0.5,"reasoning":"a \"}\" and {","evidence":[]}`, "refuted", `a "}" and {`, true, nil},
		{"wrapped as a call", `{"name":"submit_verdict","arguments":` + refuted + `}`, "refuted", "guarded by the caller", true, nil},
		{"fence wins over earlier object", `{"verdict":"confirmed","confidence":0.6,"reasoning":"draft","evidence":[{"kind":"tool_fact","match":"abc"}]}` +
			"\n```json\n" + refuted + "\n```", "refuted", "guarded by the caller", true, nil},
		{"invalid example then valid", `{"verdict":"confirmed|refuted"} then ` + refuted, "refuted", "guarded by the caller", true, nil},
		{"key case", `{"Verdict":"refuted","Confidence":0.4,"Reasoning":"r","Evidence":[]}`, "refuted", "r", true, nil},
		{"invalid only", `{"verdict":"confirmed","confidence":0.9,"reasoning":"r","evidence":[]}`, "", "", true,
			[]string{"needs at least one required evidence item"}},
		{"unknown field", `{"verdict":"refuted","confidence":0.9,"reasoning":"r","evidence":[],"notes":"x"}`, "", "", true,
			[]string{`unknown field "notes"`}},
		{"broken json", "{\"verdict\": \"refuted\", \"confidence\": 0.5, \"reasoning\": \"line one\nline two\"}", "", "", true,
			[]string{"not valid JSON"}},
		{"no object", "The finding is confirmed.", "", "", false, nil},
		{"object without verdict", `{"answer":"confirmed"}`, "", "", false, nil},
		{"unbalanced", `{"verdict":"refuted","confidence":0.5`, "", "", false, nil},
		{"empty", "", "", "", false, nil},
	}
	for _, tt := range tests {
		sub, found, err := textVerdict(tt.text)
		if found != tt.found {
			t.Errorf("%s: found = %v, want %v (err %v)", tt.name, found, tt.found, err)
			continue
		}
		if tt.verdict != "" {
			if err != nil || sub.verdict != tt.verdict || sub.reasoning != tt.reasoning {
				t.Errorf("%s: got %+v, %v; want %s with reasoning %q", tt.name, sub, err, tt.verdict, tt.reasoning)
			}
			continue
		}
		if tt.found && err == nil {
			t.Errorf("%s: accepted %+v", tt.name, sub)
			continue
		}
		if !tt.found && err != nil {
			t.Errorf("%s: error without a candidate: %v", tt.name, err)
		}
		for _, e := range tt.errs {
			if err == nil || !strings.Contains(err.Error(), e) {
				t.Errorf("%s: error %v lacks %q", tt.name, err, e)
			}
		}
	}
}

func TestTextVerdictBounded(t *testing.T) {
	t.Parallel()
	// Many unbalanced braces before the verdict: the search gives up
	// instead of scanning the text once per brace.
	noisy := strings.Repeat("{", maxObjectStarts+1) + ` {"verdict":"refuted","confidence":0.5,"reasoning":"r","evidence":[]}`
	if _, found, _ := textVerdict(noisy); found {
		t.Errorf("verdict found past %d opening braces", maxObjectStarts)
	}
	long := strings.Repeat("x", maxVerdictTextBytes) + `{"verdict":"refuted","confidence":0.5,"reasoning":"r","evidence":[]}`
	if _, found, _ := textVerdict(long); found {
		t.Errorf("verdict found beyond the first %d bytes", maxVerdictTextBytes)
	}
	within := strings.Repeat("{", maxObjectStarts-1) + ` {"verdict":"refuted","confidence":0.5,"reasoning":"r","evidence":[]}`
	if sub, found, err := textVerdict(within); !found || err != nil || sub.verdict != "refuted" {
		t.Errorf("verdict after %d braces: %+v %v %v", maxObjectStarts-1, sub, found, err)
	}
}

// FuzzTextVerdict checks that any reply text yields a valid submission, a
// validation error or nothing, never a panic.
func FuzzTextVerdict(f *testing.F) {
	for _, seed := range []string{
		"```json\n{\"verdict\":\"refuted\",\"confidence\":0.5,\"reasoning\":\"r\",\"evidence\":[]}\n```",
		`{"a":{"verdict":"x"}}`, `{"verdict":"\`, "{{{}}}", "```", `{"verdict":1}`, "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		sub, found, err := textVerdict(text)
		switch {
		case err != nil && !found:
			t.Fatalf("error %v without a candidate", err)
		case err == nil && found && (sub.reasoning == "" || sub.confidence < 0 || sub.confidence > 1):
			t.Fatalf("invalid submission accepted: %+v", sub)
		case !found && sub.verdict != "":
			t.Fatalf("submission %+v without a candidate", sub)
		}
	})
}
