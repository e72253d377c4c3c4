package llmfake

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// maxDepth stops generation in recursive schemas.
const maxDepth = 32

// FromSchema answers with a minimal document valid for the request's
// json_schema: objects carry their required properties, strings are
// "example" (padded or cut to minLength/maxLength), numbers sit at their
// minimum (or inside their bounds), enums and consts give their first value,
// arrays hold one item (or minItems). Local "#/$defs/…" references are
// followed; pattern is not honoured. A request without a json_schema gets
// the content "{}"; a schema that cannot be read gets a 400.
func FromSchema(req openai.ChatCompletionRequest) Reply {
	rf := req.ResponseFormat
	if rf == nil || rf.JSONSchema == nil || rf.JSONSchema.Schema == nil {
		return Text("{}")
	}
	raw, err := rf.JSONSchema.Schema.MarshalJSON()
	if err != nil {
		return Fail(http.StatusBadRequest, "llmfake: read json_schema: "+err.Error())
	}
	v, err := Generate(raw)
	if err != nil {
		return Fail(http.StatusBadRequest, "llmfake: read json_schema: "+err.Error())
	}
	return JSON(v)
}

// Generate returns a minimal value valid for a JSON schema, by the rules
// of FromSchema — for example the arguments of a tool from its parameters.
func Generate(schema []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, err
	}
	g := generator{root: root}
	return g.value(root, 0), nil
}

type generator struct{ root any }

func (g generator) value(node any, depth int) any {
	m, ok := node.(map[string]any)
	if !ok || depth > maxDepth {
		return nil
	}
	if ref, ok := m["$ref"].(string); ok {
		return g.value(g.resolve(ref), depth+1)
	}
	if c, ok := m["const"]; ok {
		return c
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := m[kw].([]any); ok && len(alts) > 0 {
			return g.value(pickNonNull(alts), depth+1)
		}
	}
	switch schemaType(m) {
	case "object":
		return g.object(m, depth)
	case "array":
		n := 1
		if v, ok := number(m["minItems"]); ok {
			n = max(n, int(v))
		}
		if v, ok := number(m["maxItems"]); ok {
			n = min(n, int(v))
		}
		out := make([]any, n)
		for i := range out {
			out[i] = g.value(m["items"], depth+1)
		}
		return out
	case "integer":
		return int64(pickNumber(m, true))
	case "number":
		return pickNumber(m, false)
	case "boolean":
		return false
	case "null":
		return nil
	}
	return exampleString(m)
}

func (g generator) object(m map[string]any, depth int) map[string]any {
	props, _ := m["properties"].(map[string]any)
	out := map[string]any{}
	req, _ := m["required"].([]any)
	for _, r := range req {
		name, ok := r.(string)
		if !ok {
			continue
		}
		if sub, ok := props[name]; ok {
			out[name] = g.value(sub, depth+1)
		} else {
			out[name] = "example"
		}
	}
	return out
}

// resolve follows a local reference such as "#/$defs/finding".
func (g generator) resolve(ref string) any {
	if !strings.HasPrefix(ref, "#") {
		return nil
	}
	node := g.root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#"), "/") {
		if part == "" {
			continue
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		node = m[part]
	}
	return node
}

// schemaType picks the first non-null type, inferring one when absent.
func schemaType(m map[string]any) string {
	switch t := m["type"].(type) {
	case string:
		return t
	case []any:
		var names []string
		for _, e := range t {
			if s, ok := e.(string); ok {
				names = append(names, s)
			}
		}
		if i := slices.IndexFunc(names, func(s string) bool { return s != "null" }); i >= 0 {
			return names[i]
		}
		if len(names) > 0 {
			return names[0]
		}
	}
	if _, ok := m["properties"]; ok {
		return "object"
	}
	if _, ok := m["items"]; ok {
		return "array"
	}
	return "string"
}

// pickNonNull returns the first alternative that is not just {"type":"null"}.
func pickNonNull(alts []any) any {
	for _, a := range alts {
		if m, ok := a.(map[string]any); ok && m["type"] != "null" {
			return a
		}
	}
	return alts[0]
}

// pickNumber returns a number within the schema's bounds, preferring the
// lower bound, then zero, then the upper bound, then a midpoint.
func pickNumber(m map[string]any, integer bool) float64 {
	lo, hasLo := number(m["minimum"])
	hi, hasHi := number(m["maximum"])
	exLo, hasExLo := number(m["exclusiveMinimum"])
	exHi, hasExHi := number(m["exclusiveMaximum"])
	fits := func(v float64) bool {
		return (!hasLo || v >= lo) && (!hasExLo || v > exLo) &&
			(!hasHi || v <= hi) && (!hasExHi || v < exHi) &&
			(!integer || v == math.Trunc(v))
	}
	var lows, highs []float64
	if hasLo {
		lows = append(lows, lo, math.Ceil(lo))
	}
	if hasExLo {
		lows = append(lows, math.Floor(exLo)+1, exLo+1)
	}
	if hasHi {
		highs = append(highs, hi, math.Floor(hi))
	}
	if hasExHi {
		highs = append(highs, math.Ceil(exHi)-1, exHi-1)
	}
	candidates := append(append(slices.Clone(lows), 0), highs...)
	for _, l := range append(lows, exLo) {
		for _, h := range append(highs, exHi) {
			mid := (l + h) / 2
			candidates = append(candidates, mid, math.Floor(mid), math.Ceil(mid))
		}
	}
	for _, v := range candidates {
		if fits(v) {
			return v
		}
	}
	return 0
}

// exampleString is "example" fitted to minLength and maxLength.
func exampleString(m map[string]any) string {
	s := "example"
	if n, ok := number(m["minLength"]); ok && len(s) < int(n) {
		s += strings.Repeat("x", int(n)-len(s))
	}
	if n, ok := number(m["maxLength"]); ok && len(s) > int(n) {
		s = s[:max(int(n), 0)]
	}
	return s
}

func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}
