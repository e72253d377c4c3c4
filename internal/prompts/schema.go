package prompts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// SchemaStages lists the stages that have an output schema.
var SchemaStages = []review.Stage{review.StageIntent, review.StageVerify, review.StageExpert, review.StageEval}

// Schema returns the JSON schema of a stage's structured output, for
// response_format {type: json_schema, json_schema: {name, strict: true,
// schema}}. It returns nil for a stage without a schema. The
// returned bytes must not be modified.
func (s *Set) Schema(stage review.Stage) json.RawMessage {
	return s.schemas[stage]
}

// strictKeywords are the schema keywords used by our schemas that every
// strict-mode implementation accepts. Numeric ranges and string formats are
// left out on purpose: several OpenAI-compatible servers reject them, so
// ranges are stated in descriptions and enforced by the stages.
var strictKeywords = []string{"type", "description", "properties", "required", "additionalProperties", "items", "enum"}

// checkStrictSchema reports whether a JSON schema is usable with OpenAI
// strict structured output: the root is an object; every object lists all
// its properties in required and sets additionalProperties to false; every
// array has items; and only keywords from a conservative subset appear.
func checkStrictSchema(schema []byte) error {
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		return fmt.Errorf("parse schema: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("parse schema: trailing data after the schema object")
	}
	if root["type"] != "object" {
		return fmt.Errorf("root: type must be \"object\", got %v", root["type"])
	}
	return checkNode("root", root)
}

// checkNode checks one schema node and its children.
func checkNode(at string, node map[string]any) error {
	for k := range node {
		if !slices.Contains(strictKeywords, k) {
			return fmt.Errorf("%s: keyword %q is not supported in strict mode", at, k)
		}
	}
	typ, ok := node["type"].(string)
	if !ok {
		return fmt.Errorf("%s: type must be a string, got %v", at, node["type"])
	}
	if d, ok := node["description"]; ok {
		if _, isString := d.(string); !isString {
			return fmt.Errorf("%s: description must be a string", at)
		}
	}
	switch typ {
	case "object":
		return checkObject(at, node)
	case "array":
		items, ok := node["items"].(map[string]any)
		if !ok {
			return fmt.Errorf("%s: array needs an items schema", at)
		}
		return checkNode(at+"[]", items)
	case "string", "number", "integer", "boolean":
		return checkEnum(at, typ, node)
	default:
		return fmt.Errorf("%s: unsupported type %q", at, typ)
	}
}

// checkObject checks the strict-mode rules of an object node.
func checkObject(at string, node map[string]any) error {
	if node["additionalProperties"] != false {
		return fmt.Errorf("%s: additionalProperties must be false", at)
	}
	props, ok := node["properties"].(map[string]any)
	if !ok || len(props) == 0 {
		return fmt.Errorf("%s: object needs properties", at)
	}
	reqList, ok := node["required"].([]any)
	if !ok {
		return fmt.Errorf("%s: object needs a required list", at)
	}
	required := make([]string, 0, len(reqList))
	for _, r := range reqList {
		name, ok := r.(string)
		if !ok {
			return fmt.Errorf("%s: required entries must be strings", at)
		}
		required = append(required, name)
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	sortedRequired := slices.Clone(required)
	sort.Strings(sortedRequired)
	if !slices.Equal(names, slices.Compact(sortedRequired)) || len(required) != len(names) {
		return fmt.Errorf("%s: required %v must list every property %v exactly once", at, required, names)
	}
	for _, name := range names {
		child, ok := props[name].(map[string]any)
		if !ok {
			return fmt.Errorf("%s.%s: property schema must be an object", at, name)
		}
		if err := checkNode(at+"."+name, child); err != nil {
			return err
		}
	}
	return nil
}

// checkEnum checks that an enum, if present, is a non-empty list of values
// of the node's type.
func checkEnum(at, typ string, node map[string]any) error {
	raw, ok := node["enum"]
	if !ok {
		return nil
	}
	values, ok := raw.([]any)
	if !ok || len(values) == 0 {
		return fmt.Errorf("%s: enum must be a non-empty list", at)
	}
	for _, v := range values {
		if _, isString := v.(string); isString != (typ == "string") {
			return fmt.Errorf("%s: enum value %v does not match type %s", at, v, typ)
		}
	}
	return nil
}
