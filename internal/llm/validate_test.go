package llm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestValidateJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, schema, doc string
		want              []string // issues; nil means valid
	}{
		{"valid findings", findingsSchema, goodFindings, nil},
		{"wrong type deep", findingsSchema,
			`{"findings": [{"risk_type":"concurrency","line_start":1,"confidence":0.5},{"risk_type":"concurrency","line_start":2,"confidence":0.5},{"risk_type":"concurrency","line_start":"3","confidence":0.5}]}`,
			[]string{"$.findings[2].line_start: expected integer, got string"}},
		{"missing required", findingsSchema, `{"findings": [{"risk_type":"concurrency","confidence":0.5}]}`,
			[]string{"$.findings[0].line_start: required property is missing"}},
		{"additional property", findingsSchema, `{"findings": [], "extra": 1}`,
			[]string{"$.extra: property is not allowed"}},
		{"enum", findingsSchema, `{"findings": [{"risk_type":"style","line_start":1,"confidence":0.5}]}`,
			[]string{`$.findings[0].risk_type: "style" is not one of "robustness", "concurrency"`}},
		{"maximum", findingsSchema, `{"findings": [{"risk_type":"concurrency","line_start":1,"confidence":1.5}]}`,
			[]string{"$.findings[0].confidence: 1.5 is greater than the maximum 1"}},
		{"minimum", findingsSchema, `{"findings": [{"risk_type":"concurrency","line_start":0,"confidence":0.5}]}`,
			[]string{"$.findings[0].line_start: 0 is less than the minimum 1"}},
		{"integer accepts 2.0", `{"type":"integer"}`, `2.0`, nil},
		{"integer rejects 2.5", `{"type":"integer"}`, `2.5`, []string{"$: expected integer, got number"}},
		{"number accepts integer", `{"type":"number"}`, `3`, nil},
		{"nullable via type array", `{"type":"object","properties":{"s":{"type":["string","null"]}}}`, `{"s": null}`, nil},
		{"nullable rejects number", `{"type":"object","properties":{"s":{"type":["string","null"]}}}`, `{"s": 4}`,
			[]string{"$.s: expected string or null, got integer"}},
		{"minItems", `{"type":"array","minItems":2,"items":{"type":"string"}}`, `["a"]`,
			[]string{"$: has 1 items, fewer than the minimum 2"}},
		{"maxItems", `{"type":"array","maxItems":1}`, `[1,2]`, []string{"$: has 2 items, more than the maximum 1"}},
		{"items type", `{"type":"array","items":{"type":"boolean"}}`, `[true, "no"]`, []string{"$[1]: expected boolean, got string"}},
		{"string lengths", `{"type":"string","minLength":3,"maxLength":4}`, `"héé"`, nil},
		{"string too short", `{"type":"string","minLength":3}`, `"ab"`, []string{"$: string has 2 characters, fewer than the minimum 3"}},
		{"pattern", `{"type":"string","pattern":"^[a-z]+$"}`, `"Abc"`, []string{`$: "Abc" does not match pattern "^[a-z]+$"`}},
		{"exclusive bounds", `{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}`, `0`, []string{"$: 0 must be greater than 0"}},
		{"const", `{"const":"x"}`, `"y"`, []string{`$: "y" is not the required value "x"`}},
		{"enum numbers by value", `{"enum":[1,2]}`, `2.0`, nil},
		{"odd key path", `{"type":"object","properties":{"a b":{"type":"string"}}}`, `{"a b": 1}`,
			[]string{`$["a b"]: expected string, got integer`}},
		{"additionalProperties schema", `{"type":"object","additionalProperties":{"type":"integer"}}`, `{"a":1,"b":"x"}`,
			[]string{"$.b: expected integer, got string"}},
		{"anyOf passes", `{"anyOf":[{"type":"string"},{"type":"null"}]}`, `null`, nil},
		{"anyOf fails", `{"anyOf":[{"type":"string"},{"type":"null"}]}`, `1`,
			[]string{"$: matches none of the allowed alternatives (expected string, got integer | expected null, got integer)"}},
		{"allOf", `{"allOf":[{"type":"integer"},{"minimum":5}]}`, `3`, []string{"$: 3 is less than the minimum 5"}},
		{"several issues sorted", `{"type":"object","required":["a","b"],"additionalProperties":false,"properties":{"a":{"type":"string"},"b":{"type":"string"}}}`,
			`{"z":1,"y":2}`,
			[]string{"$.a: required property is missing", "$.b: required property is missing", "$.y: property is not allowed", "$.z: property is not allowed"}},
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
			if strings.Join(ve.Issues, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("issues:\n%s\nwant:\n%s", strings.Join(ve.Issues, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestValidateJSONBadInput(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, schema, doc, want string }{
		{"schema not json", `{`, `{}`, "schema is not valid JSON"},
		{"schema not object", `[1]`, `{}`, "want an object, got array"},
		{"unknown type", `{"type":"float"}`, `1`, `unknown type "float"`},
		{"ref unsupported", `{"properties":{"a":{"$ref":"#/$defs/a"}}}`, `{}`, `schema $.properties.a: keyword "$ref" is not supported`},
		{"bad minItems", `{"minItems":-1}`, `[]`, "minItems must be a non-negative integer"},
		{"bad pattern", `{"pattern":"("}`, `"x"`, "pattern"},
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
	if !strings.HasPrefix(err.Error(), "20 problems: $[0]: expected integer") {
		t.Errorf("message = %.80s", err.Error())
	}
}
