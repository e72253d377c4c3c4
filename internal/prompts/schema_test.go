package prompts

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

func TestEmbeddedSchemasAreStrict(t *testing.T) {
	t.Parallel()
	s := mustLoad(t)
	for _, st := range SchemaStages {
		raw := s.Schema(st)
		if raw == nil {
			t.Fatalf("no schema for %s", st)
		}
		if !json.Valid(raw) {
			t.Errorf("%s schema is not valid JSON", st)
		}
		if err := checkStrictSchema(raw); err != nil {
			t.Errorf("%s schema: %v", st, err)
		}
	}
	if s.Schema(review.StageReport) != nil {
		t.Error("report stage should have no schema")
	}
}

// Independent of checkStrictSchema: walk every object node and check the
// two strict-mode rules directly.
func TestEveryObjectIsClosedAndFullyRequired(t *testing.T) {
	t.Parallel()
	s := mustLoad(t)
	for _, st := range SchemaStages {
		var root any
		if err := json.Unmarshal(s.Schema(st), &root); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		objects := 0
		var walk func(at string, v any)
		walk = func(at string, v any) {
			m, ok := v.(map[string]any)
			if !ok {
				return
			}
			if m["type"] == "object" {
				objects++
				if m["additionalProperties"] != false {
					t.Errorf("%s %s: additionalProperties is %v", st, at, m["additionalProperties"])
				}
				props, _ := m["properties"].(map[string]any)
				req, _ := m["required"].([]any)
				var reqNames []string
				for _, r := range req {
					reqNames = append(reqNames, r.(string))
				}
				for name := range props {
					if !slices.Contains(reqNames, name) {
						t.Errorf("%s %s: property %q not required", st, at, name)
					}
				}
				if len(reqNames) != len(props) {
					t.Errorf("%s %s: required %v vs %d properties", st, at, reqNames, len(props))
				}
				for name, p := range props {
					walk(at+"."+name, p)
				}
			}
			if items, ok := m["items"]; ok {
				walk(at+"[]", items)
			}
		}
		walk("root", root)
		if objects == 0 {
			t.Errorf("%s: no object nodes found", st)
		}
	}
}

func TestCheckStrictSchemaRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, schema, wantErr string
	}{
		{"not json", `{`, "parse schema"},
		{"trailing data", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false} {}`, "trailing"},
		{"root not object", `{"type":"array","items":{"type":"string"}}`, "root: type must be"},
		{"open object", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, "additionalProperties"},
		{"optional property", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"],"additionalProperties":false}`, "every property"},
		{"required twice", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a","a"],"additionalProperties":false}`, "every property"},
		{"nested open object", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}}},"required":["a"],"additionalProperties":false}`, "root.a[]"},
		{"unsupported keyword", `{"type":"object","properties":{"c":{"type":"number","minimum":0}},"required":["c"],"additionalProperties":false}`, `"minimum"`},
		{"array without items", `{"type":"object","properties":{"a":{"type":"array"}},"required":["a"],"additionalProperties":false}`, "items"},
		{"enum of wrong type", `{"type":"object","properties":{"a":{"type":"string","enum":[1]}},"required":["a"],"additionalProperties":false}`, "enum value"},
		{"unknown type", `{"type":"object","properties":{"a":{"type":"date"}},"required":["a"],"additionalProperties":false}`, "unsupported type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := checkStrictSchema([]byte(tt.schema))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}

// schemaProps returns the property names of the object at path (a list of
// property names; "[]" steps into array items).
func schemaProps(t *testing.T, raw json.RawMessage, path ...string) map[string]any {
	t.Helper()
	var node map[string]any
	if err := json.Unmarshal(raw, &node); err != nil {
		t.Fatal(err)
	}
	for _, step := range path {
		if step == "[]" {
			node = node["items"].(map[string]any)
			continue
		}
		node = node["properties"].(map[string]any)[step].(map[string]any)
	}
	return node["properties"].(map[string]any)
}

// The schema enums list exactly the domain's values.
func TestSchemaEnumsMatchDomain(t *testing.T) {
	t.Parallel()
	s := mustLoad(t)
	enum := func(stage review.Stage, field string, path ...string) []string {
		prop := schemaProps(t, s.Schema(stage), path...)[field].(map[string]any)
		var out []string
		for _, v := range prop["enum"].([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	var risks, severities []string
	for _, r := range review.RiskTypes {
		risks = append(risks, string(r))
	}
	for _, v := range review.Severities {
		severities = append(severities, string(v))
	}
	tests := []struct {
		name      string
		got, want []string
	}{
		{"risk_type", enum(review.StageIntent, "risk_type", "findings", "[]"), risks},
		{"severity", enum(review.StageIntent, "severity", "findings", "[]"), severities},
		{"expert verdict", enum(review.StageExpert, "verdict"), []string{review.VerdictConfirmed, review.VerdictRefuted, review.VerdictInconclusive}},
		{"eval verdict", enum(review.StageEval, "verdict"), []string{review.VerdictConfirmed, review.VerdictDisputed, review.VerdictUncertain}},
	}
	for _, tt := range tests {
		if !slices.Equal(tt.got, tt.want) {
			t.Errorf("%s enum %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

// The expert schema has exactly the shape of the agent runtime's
// submit_verdict arguments, so a structured reply can be judged like a
// submitted verdict.
func TestExpertSchemaShape(t *testing.T) {
	t.Parallel()
	raw := mustLoad(t).Schema(review.StageExpert)
	types := func(props map[string]any) map[string]string {
		out := make(map[string]string, len(props))
		for name, p := range props {
			out[name], _ = p.(map[string]any)["type"].(string)
		}
		return out
	}
	tests := []struct {
		name string
		path []string
		want map[string]string
	}{
		{"verdict", nil, map[string]string{
			"verdict": "string", "confidence": "number", "reasoning": "string", "evidence": "array",
		}},
		{"evidence item", []string{"evidence", "[]"}, map[string]string{
			"kind": "string", "path": "string", "start_line": "integer", "end_line": "integer",
			"match": "string", "required": "boolean",
		}},
	}
	for _, tt := range tests {
		got := types(schemaProps(t, raw, tt.path...))
		if len(got) != len(tt.want) {
			t.Errorf("%s properties %v, want %v", tt.name, got, tt.want)
		}
		for name, typ := range tt.want {
			if got[name] != typ {
				t.Errorf("%s.%s has type %q, want %q", tt.name, name, got[name], typ)
			}
		}
	}
	var kinds []string
	kind := schemaProps(t, raw, "evidence", "[]")["kind"].(map[string]any)
	for _, v := range kind["enum"].([]any) {
		kinds = append(kinds, v.(string))
	}
	if want := []string{"file_exists", "content_contains", "tool_fact"}; !slices.Equal(kinds, want) {
		t.Errorf("evidence kind enum %v, want %v", kinds, want)
	}
	// The fields a kind does not use must say how to leave them empty.
	for _, name := range []string{"path", "start_line", "end_line", "match"} {
		desc, _ := schemaProps(t, raw, "evidence", "[]")[name].(map[string]any)["description"].(string)
		if !strings.Contains(desc, `""`) && !strings.Contains(desc, "0 means not used") {
			t.Errorf("evidence.%s description %q does not say how to leave it unused", name, desc)
		}
	}
}
