package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// schema is a compiled JSON Schema node. Only the subset that structured
// output needs is supported; see ValidateJSON.
type schema struct {
	types        []string // allowed JSON types; empty means any
	properties   map[string]*schema
	propNames    []string // sorted keys of properties
	required     []string
	noAdditional bool    // additionalProperties: false
	additional   *schema // additionalProperties as a schema
	items        *schema
	enum         []any
	hasConst     bool
	constVal     any
	anyOf        []*schema
	allOf        []*schema

	minimum, maximum                   *float64
	exclusiveMinimum, exclusiveMaximum *float64
	minItems, maxItems                 *int
	minLength, maxLength               *int
	pattern                            *regexp.Regexp
}

var knownTypes = []string{"object", "array", "string", "integer", "number", "boolean", "null"}

// unsupportedKeywords would change what validates if ignored, so a schema
// using them is refused rather than checked wrongly.
var unsupportedKeywords = []string{
	"$ref", "oneOf", "not", "if", "then", "else", "patternProperties",
	"dependentRequired", "dependentSchemas", "prefixItems", "contains",
	"uniqueItems", "propertyNames", "unevaluatedProperties", "multipleOf",
}

// compileSchema parses a JSON Schema document.
func compileSchema(raw json.RawMessage) (*schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("schema is empty")
	}
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	return compileNode(v, "$")
}

func compileNode(v any, path string) (*schema, error) {
	if b, ok := v.(bool); ok {
		if b {
			return &schema{}, nil
		}
		return nil, fmt.Errorf("schema %s: the schema false is not supported", path)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema %s: want an object, got %s", path, jsonType(v))
	}
	for _, k := range unsupportedKeywords {
		if _, ok := m[k]; ok {
			return nil, fmt.Errorf("schema %s: keyword %q is not supported", path, k)
		}
	}
	s := &schema{}
	var err error
	if s.types, err = compileTypes(m["type"], path); err != nil {
		return nil, err
	}
	if err := s.compileObject(m, path); err != nil {
		return nil, err
	}
	if it, ok := m["items"]; ok {
		if s.items, err = compileNode(it, path+".items"); err != nil {
			return nil, err
		}
	}
	if e, ok := m["enum"]; ok {
		list, ok := e.([]any)
		if !ok || len(list) == 0 {
			return nil, fmt.Errorf("schema %s: enum must be a non-empty array", path)
		}
		s.enum = list
	}
	if c, ok := m["const"]; ok {
		s.hasConst, s.constVal = true, c
	}
	for _, kw := range []string{"anyOf", "allOf"} {
		list, err := compileList(m, kw, path)
		if err != nil {
			return nil, err
		}
		if kw == "anyOf" {
			s.anyOf = list
		} else {
			s.allOf = list
		}
	}
	if err := s.compileBounds(m, path); err != nil {
		return nil, err
	}
	return s, nil
}

func compileTypes(t any, path string) ([]string, error) {
	var types []string
	switch t := t.(type) {
	case nil:
		return nil, nil
	case string:
		types = []string{t}
	case []any:
		for _, e := range t {
			name, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("schema %s: type array must hold strings", path)
			}
			types = append(types, name)
		}
	default:
		return nil, fmt.Errorf("schema %s: type must be a string or an array of strings", path)
	}
	for _, name := range types {
		if !slices.Contains(knownTypes, name) {
			return nil, fmt.Errorf("schema %s: unknown type %q", path, name)
		}
	}
	return types, nil
}

func (s *schema) compileObject(m map[string]any, path string) error {
	if p, ok := m["properties"]; ok {
		props, ok := p.(map[string]any)
		if !ok {
			return fmt.Errorf("schema %s: properties must be an object", path)
		}
		s.properties = make(map[string]*schema, len(props))
		for name, sub := range props {
			c, err := compileNode(sub, path+".properties"+pathKey(name))
			if err != nil {
				return err
			}
			s.properties[name] = c
			s.propNames = append(s.propNames, name)
		}
		slices.Sort(s.propNames)
	}
	if r, ok := m["required"]; ok {
		list, ok := r.([]any)
		if !ok {
			return fmt.Errorf("schema %s: required must be an array of strings", path)
		}
		for _, e := range list {
			name, ok := e.(string)
			if !ok {
				return fmt.Errorf("schema %s: required must be an array of strings", path)
			}
			s.required = append(s.required, name)
		}
	}
	switch a := m["additionalProperties"].(type) {
	case nil:
	case bool:
		s.noAdditional = !a
	default:
		c, err := compileNode(a, path+".additionalProperties")
		if err != nil {
			return err
		}
		s.additional = c
	}
	return nil
}

func compileList(m map[string]any, kw, path string) ([]*schema, error) {
	v, ok := m[kw]
	if !ok {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, fmt.Errorf("schema %s: %s must be a non-empty array", path, kw)
	}
	out := make([]*schema, 0, len(list))
	for i, e := range list {
		c, err := compileNode(e, fmt.Sprintf("%s.%s[%d]", path, kw, i))
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func (s *schema) compileBounds(m map[string]any, path string) error {
	floats := []struct {
		kw  string
		dst **float64
	}{
		{"minimum", &s.minimum}, {"maximum", &s.maximum},
		{"exclusiveMinimum", &s.exclusiveMinimum}, {"exclusiveMaximum", &s.exclusiveMaximum},
	}
	for _, f := range floats {
		v, ok := m[f.kw]
		if !ok {
			continue
		}
		n, ok := v.(json.Number)
		if !ok {
			return fmt.Errorf("schema %s: %s must be a number", path, f.kw)
		}
		x, err := n.Float64()
		if err != nil {
			return fmt.Errorf("schema %s: %s: %w", path, f.kw, err)
		}
		*f.dst = &x
	}
	ints := []struct {
		kw  string
		dst **int
	}{
		{"minItems", &s.minItems}, {"maxItems", &s.maxItems},
		{"minLength", &s.minLength}, {"maxLength", &s.maxLength},
	}
	for _, f := range ints {
		v, ok := m[f.kw]
		if !ok {
			continue
		}
		n, ok := v.(json.Number)
		x, err := n.Int64()
		if !ok || err != nil || x < 0 {
			return fmt.Errorf("schema %s: %s must be a non-negative integer", path, f.kw)
		}
		xi := int(x)
		*f.dst = &xi
	}
	if p, ok := m["pattern"]; ok {
		str, ok := p.(string)
		if !ok {
			return fmt.Errorf("schema %s: pattern must be a string", path)
		}
		re, err := regexp.Compile(str)
		if err != nil {
			return fmt.Errorf("schema %s: pattern %q: %w", path, str, err)
		}
		s.pattern = re
	}
	return nil
}

// decodeJSON decodes one JSON document, keeping numbers as json.Number and
// refusing trailing data.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the JSON document")
	}
	return v, nil
}

// pathKey formats an object key as a path step: ".name" for identifiers,
// otherwise ["quoted"].
func pathKey(k string) string {
	ident := k != ""
	for i, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			ident = false
			break
		}
	}
	if ident {
		return "." + k
	}
	return "[" + strings.TrimSpace(fmt.Sprintf("%q", k)) + "]"
}
