package llmfake_test

import (
	"encoding/json"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/llm"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

func TestFromSchemaValidates(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"findings": `{"type":"object","additionalProperties":false,"required":["findings","summary"],
			"properties":{"summary":{"type":"string","minLength":10},
			"findings":{"type":"array","items":{"type":"object","additionalProperties":false,
				"required":["risk_type","line_start","confidence","note"],
				"properties":{"risk_type":{"type":"string","enum":["robustness","concurrency"]},
				"line_start":{"type":"integer","minimum":1},
				"confidence":{"type":"number","minimum":0.2,"maximum":1},
				"note":{"type":["string","null"],"maxLength":3}}}}}}`,
		"verdict": `{"type":"object","required":["verdict","final_confidence","evidence"],
			"properties":{"verdict":{"enum":["confirmed","disputed","uncertain"]},
			"final_confidence":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
			"evidence":{"type":"array","minItems":2,"items":{"type":"string"}}}}`,
		"bounds": `{"type":"object","required":["neg","ex","mid","flag","nothing","fixed"],
			"properties":{"neg":{"type":"integer","maximum":-3},
			"ex":{"type":"integer","exclusiveMinimum":4,"exclusiveMaximum":6},
			"mid":{"type":"number","minimum":-1.5,"maximum":-0.5},
			"flag":{"type":"boolean"},"nothing":{"type":"null"},"fixed":{"const":"v1"}}}`,
		"alternatives": `{"type":"object","required":["a","b"],"properties":{
			"a":{"anyOf":[{"type":"null"},{"type":"integer","minimum":7}]},
			"b":{"allOf":[{"type":"string"}]}}}`,
	}
	for name, schema := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			reply := llmfake.FromSchema(withSchema("s", schema))
			if reply.Status != 0 {
				t.Fatalf("reply = %+v", reply)
			}
			if err := llm.ValidateJSON(json.RawMessage(schema), []byte(reply.Content)); err != nil {
				t.Errorf("generated %s does not validate: %v", reply.Content, err)
			}
		})
	}
}

func TestFromSchemaFollowsRefs(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","required":["items"],"$defs":{"item":{"type":"object","required":["id"],
		"properties":{"id":{"type":"integer","minimum":3}}}},
		"properties":{"items":{"type":"array","items":{"$ref":"#/$defs/item"}}}}`
	reply := llmfake.FromSchema(withSchema("s", schema))
	if reply.Content != `{"items":[{"id":3}]}` {
		t.Errorf("content = %s", reply.Content)
	}
}

func TestFromSchemaEdgeCases(t *testing.T) {
	t.Parallel()
	if got := llmfake.FromSchema(userReq("x")); got.Content != "{}" {
		t.Errorf("no schema: %+v", got)
	}
	// A schema that refers to itself stops at the depth limit.
	loop := `{"type":"object","required":["next"],"properties":{"next":{"$ref":"#"}}}`
	if got := llmfake.FromSchema(withSchema("s", loop)); got.Status != 0 || len(got.Content) == 0 {
		t.Errorf("recursive schema: %+v", got)
	}
}
