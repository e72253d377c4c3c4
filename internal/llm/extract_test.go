package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestExtractJSON(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"plain", `{"a":1}`, `{"a":1}`},
		{"whitespace and bom", "\ufeff  {\"a\":1}\n", `{"a":1}`},
		{"array document", `[1,2]`, `[1,2]`},
		{"json fence", "```json\n{\"a\": [1, 2]}\n```", `{"a": [1, 2]}`},
		{"bare fence", "Result:\n```\n{\"a\": 1}\n```\nDone.", `{"a": 1}`},
		{"one-line fence", "```{\"a\": 1}```", `{"a": 1}`},
		{"unclosed fence", "```json\n{\"a\": 1}", `{"a": 1}`},
		{"prose before and after", `Sure! Here it is: {"a": {"b": "c"}} Hope that helps.`, `{"a": {"b": "c"}}`},
		{"braces inside strings", `note {"s": "a } b { c", "t": "q\"}"} end`, `{"s": "a } b { c", "t": "q\"}"}`},
		{"skips invalid first object", `{not json} then {"ok": true}`, `{"ok": true}`},
		{"trailing commas", `{"a": [1, 2,], "b": {"c": 1,},}`, `{"a": [1, 2], "b": {"c": 1}}`},
		{"comma inside string kept", `{"a": "x,}"}`, `{"a": "x,}"}`},
		{"trailing comma in prose-wrapped", "Answer: {\"a\": 1,\n}\nthanks", "{\"a\": 1\n}"},
		{"second fence when first is prose", "```text\nno json here\n```\n```json\n{\"a\":2}\n```", `{"a":2}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ExtractJSON(tc.in)
			if err != nil {
				t.Fatalf("ExtractJSON: %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Errorf("result is not valid JSON: %s", got)
			}
		})
	}
}

func TestExtractJSONErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"empty", "  ", "reply is empty"},
		{"prose only", "I could not find any issues.", "no JSON object found"},
		{"unclosed", `Here: {"a": 1`, "never closed"},
		{"malformed", `Here: {"a": nope}`, "malformed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ExtractJSON(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestExtractJSONManyBracesStaysBounded(t *testing.T) {
	t.Parallel()
	in := strings.Repeat("{x} ", 10_000) + `{"a":1}`
	// Past maxCandidates the scan gives up rather than going quadratic.
	if _, err := ExtractJSON(in); err == nil {
		t.Errorf("expected the candidate limit to stop the scan")
	}
	if got, err := ExtractJSON(strings.Repeat("{x} ", 10) + `{"a":1}`); err != nil || string(got) != `{"a":1}` {
		t.Errorf("got %s, %v", got, err)
	}
}
