package llm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// The validator is a maintained library whose messages may change with
// its releases: these cases pin the path of each issue and the words that
// say what is wrong, not the library's exact phrasing.
func TestValidateJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, schema, doc string
		want              []string // issue prefixes ("path: words"); nil means valid
	}{
		{"valid findings", findingsSchema, goodFindings, nil},
		{"wrong type deep", findingsSchema,
			`{"findings": [{"risk_type":"concurrency","line_start":1,"confidence":0.5},{"risk_type":"concurrency","line_start":2,"confidence":0.5},{"risk_type":"concurrency","line_start":"3","confidence":0.5}]}`,
			[]string{"$.findings[2].line_start: got string, want integer"}},
		{"missing required", findingsSchema, `{"findings": [{"risk_type":"concurrency","confidence":0.5}]}`,
			[]string{"$.findings[0]: missing property 'line_start'"}},
		{"additional property", findingsSchema, `{"findings": [], "extra": 1}`,
			[]string{"$: additional properties 'extra' not allowed"}},
		{"enum", findingsSchema, `{"findings": [{"risk_type":"style","line_start":1,"confidence":0.5}]}`,
			[]string{"$.findings[0].risk_type: value must be one of 'robustness', 'concurrency'"}},
		{"maximum", findingsSchema, `{"findings": [{"risk_type":"concurrency","line_start":1,"confidence":1.5}]}`,
			[]string{"$.findings[0].confidence: maximum"}},
		{"minimum", findingsSchema, `{"findings": [{"risk_type":"concurrency","line_start":0,"confidence":0.5}]}`,
			[]string{"$.findings[0].line_start: minimum"}},
		{"integer accepts 2.0", `{"type":"integer"}`, `2.0`, nil},
		{"integer rejects 2.5", `{"type":"integer"}`, `2.5`, []string{"$: got number, want integer"}},
		{"number accepts integer", `{"type":"number"}`, `3`, nil},
		{"nullable via type array", `{"type":"object","properties":{"s":{"type":["string","null"]}}}`, `{"s": null}`, nil},
		{"nullable rejects number", `{"type":"object","properties":{"s":{"type":["string","null"]}}}`, `{"s": 4}`,
			[]string{"$.s: got number, want null or string"}},
		{"minItems", `{"type":"array","minItems":2,"items":{"type":"string"}}`, `["a"]`, []string{"$: minItems"}},
		{"maxItems", `{"type":"array","maxItems":1}`, `[1,2]`, []string{"$: maxItems"}},
		{"items type", `{"type":"array","items":{"type":"boolean"}}`, `[true, "no"]`, []string{"$[1]: got string, want boolean"}},
		{"string lengths", `{"type":"string","minLength":3,"maxLength":4}`, `"héé"`, nil},
		{"string too short", `{"type":"string","minLength":3}`, `"ab"`, []string{"$: minLength"}},
		{"pattern", `{"type":"string","pattern":"^[a-z]+$"}`, `"Abc"`, []string{"$: 'Abc' does not match pattern"}},
		{"exclusive bounds", `{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}`, `0`, []string{"$: exclusiveMinimum"}},
		{"const", `{"const":"x"}`, `"y"`, []string{"$: value must be 'x'"}},
		{"enum numbers by value", `{"enum":[1,2]}`, `2.0`, nil},
		{"odd key path", `{"type":"object","properties":{"a b":{"type":"string"}}}`, `{"a b": 1}`,
			[]string{`$["a b"]: got number, want string`}},
		{"additionalProperties schema", `{"type":"object","additionalProperties":{"type":"integer"}}`, `{"a":1,"b":"x"}`,
			[]string{"$.b: got string, want integer"}},
		{"anyOf passes", `{"anyOf":[{"type":"string"},{"type":"null"}]}`, `null`, nil},
		{"anyOf fails", `{"anyOf":[{"type":"string"},{"type":"null"}]}`, `1`,
			[]string{"$: got number, want null", "$: got number, want string"}},
		{"allOf", `{"allOf":[{"type":"integer"},{"minimum":5}]}`, `3`, []string{"$: minimum"}},
		{"several issues sorted", `{"type":"object","required":["a","b"],"additionalProperties":false,"properties":{"a":{"type":"string"},"b":{"type":"string"}}}`,
			`{"z":1,"y":2}`,
			[]string{"$: additional properties 'y', 'z' not allowed", "$: missing properties 'a', 'b'"}},
		{"annotations ignored", `{"type":"string","description":"d","title":"t","format":"uri"}`, `"x"`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateJSON(json.RawMessage(tc.schema), []byte(tc.doc))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("ValidateJSON: %v", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want ValidationError", err)
			}
			ok := len(ve.Issues) == len(tc.want)
			for i := 0; ok && i < len(tc.want); i++ {
				ok = strings.HasPrefix(ve.Issues[i], tc.want[i])
			}
			if !ok {
				t.Errorf("issues:\n%s\nwant prefixes:\n%s", strings.Join(ve.Issues, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// Each schema is compiled once: the same bytes give the same compiled
// schema.
func TestSchemaIsCompiledOnce(t *testing.T) {
	t.Parallel()
	a, err := compileSchema(json.RawMessage(findingsSchema))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := compileSchema(json.RawMessage(findingsSchema))
	if a != b {
		t.Error("the same schema was compiled twice")
	}
}

func TestValidateJSONBadInput(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, schema, doc, want string }{
		{"schema not json", `{`, `{}`, "schema is not valid JSON"},
		{"schema not object", `[1]`, `{}`, "want an object, got array"},
		{"unknown type", `{"type":"float"}`, `1`, "schema"},
		{"dangling ref", `{"properties":{"a":{"$ref":"#/$defs/a"}}}`, `{}`, "schema"},
		{"external ref refused", `{"properties":{"a":{"$ref":"https://example.com/a.json"}}}`, `{}`, "is not loaded"},
		{"bad minItems", `{"minItems":-1}`, `[]`, "schema"},
		{"bad pattern", `{"pattern":"("}`, `"x"`, "schema"},
		{"doc not json", `{}`, `{"a":`, "document is not valid JSON"},
		{"doc trailing data", `{}`, `{} {}`, "unexpected data after the JSON document"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateJSON(json.RawMessage(tc.schema), []byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
			var ve *ValidationError
			if errors.As(err, &ve) {
				t.Errorf("bad input reported as a validation failure: %v", err)
			}
		})
	}
}

func TestValidateJSONCapsIssues(t *testing.T) {
	t.Parallel()
	doc := "[" + strings.TrimSuffix(strings.Repeat(`"x",`, 50), ",") + "]"
	err := ValidateJSON(json.RawMessage(`{"items":{"type":"integer"}}`), []byte(doc))
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Issues) != maxIssues {
		t.Fatalf("err = %v, want %d issues", err, maxIssues)
	}
	if !strings.HasPrefix(err.Error(), "20 problems: $[0]: got string, want integer") {
		t.Errorf("message = %.80s", err.Error())
	}
}

// A number the validator cannot represent (the fuzzer's 1e1000010 against
// a minimum) makes the reply invalid; it does not panic the handler.
func TestValidateJSONHugeNumber(t *testing.T) {
	t.Parallel()
	err := ValidateJSON(json.RawMessage(`{"minimum": 0}`), []byte(`1e1000010`))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want a *ValidationError", err)
	}
}
