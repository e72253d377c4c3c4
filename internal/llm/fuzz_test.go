package llm

import (
	"encoding/json"
	"testing"
)

// FuzzExtractJSON checks that any reply either yields valid JSON or a
// clear error, never a panic. The seeds run as a normal test.
func FuzzExtractJSON(f *testing.F) {
	for _, s := range []string{
		goodFindings, "```json\n{\"a\":1,}\n```", "text {\"a\": \"}\"} more", "{{{{", "```", "}{", `{"a":[1,2,],}`, "\ufeff[1]",
		`{"s":"\\"}`, "prose ``` {\"x\": 1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ExtractJSON(s)
		if err == nil && !json.Valid(b) {
			t.Fatalf("ExtractJSON(%q) returned invalid JSON %q", s, b)
		}
		if err != nil && b != nil {
			t.Fatalf("ExtractJSON(%q) returned data with an error", s)
		}
	})
}

// FuzzValidateJSON checks that validation never panics on arbitrary
// documents against a fixed schema, nor on arbitrary schemas.
func FuzzValidateJSON(f *testing.F) {
	f.Add(findingsSchema, goodFindings)
	f.Add(`{"anyOf":[{"type":"string"},{"enum":[1,[2],{"a":null}]}]}`, `{"a":null}`)
	f.Add(`{"type":["integer","null"],"minimum":1e400}`, `1e400`)
	f.Add(`{"items":{"items":{"const":{"a":[1]}}}}`, `[[{"a":[1.0]}]]`)
	f.Fuzz(func(t *testing.T, schema, doc string) {
		_ = ValidateJSON(json.RawMessage(schema), []byte(doc))
	})
}
