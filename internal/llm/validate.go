package llm

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxIssues bounds how many problems one validation reports.
const maxIssues = 20

// ValidationError lists what is wrong with a document, one path-qualified
// issue per entry, such as "$.findings[2].line_start: expected integer, got
// string".
type ValidationError struct {
	Issues []string
}

// Error joins the issues into one message.
func (e *ValidationError) Error() string {
	if len(e.Issues) == 1 {
		return e.Issues[0]
	}
	return fmt.Sprintf("%d problems: %s", len(e.Issues), strings.Join(e.Issues, "; "))
}

// ValidateJSON checks doc against a JSON Schema. The supported keywords are
// type (a name or an array of names, so "nullable" is ["string","null"]),
// properties, required, additionalProperties (false or a schema), items,
// enum, const, anyOf, allOf, minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, minItems, maxItems, minLength, maxLength and pattern.
// Annotations such as description are ignored; keywords that would change
// the outcome but are not supported ($ref, oneOf, …) make the schema an
// error. A document that does not conform yields a *ValidationError.
func ValidateJSON(schema json.RawMessage, doc []byte) error {
	s, err := compileSchema(schema)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	return s.validateDoc(doc)
}

// validateDoc decodes doc and checks it against s.
func (s *schema) validateDoc(doc []byte) error {
	v, err := decodeJSON(doc)
	if err != nil {
		return fmt.Errorf("document is not valid JSON: %w", err)
	}
	var issues []string
	s.validate(v, "$", &issues)
	if len(issues) > 0 {
		return &ValidationError{Issues: issues}
	}
	return nil
}

// validate appends to issues every way v violates s.
func (s *schema) validate(v any, path string, issues *[]string) {
	add := func(format string, args ...any) {
		if len(*issues) < maxIssues {
			*issues = append(*issues, path+": "+fmt.Sprintf(format, args...))
		}
	}
	if len(s.types) > 0 && !slices.ContainsFunc(s.types, func(t string) bool { return hasType(v, t) }) {
		add("expected %s, got %s", strings.Join(s.types, " or "), jsonType(v))
		return
	}
	if s.enum != nil && !slices.ContainsFunc(s.enum, func(e any) bool { return equalJSON(e, v) }) {
		add("%s is not one of %s", brief(v), listValues(s.enum))
	}
	if s.hasConst && !equalJSON(s.constVal, v) {
		add("%s is not the required value %s", brief(v), brief(s.constVal))
	}
	switch v := v.(type) {
	case map[string]any:
		s.validateObject(v, path, issues)
	case []any:
		s.validateArray(v, path, issues, add)
	case string:
		s.validateString(v, add)
	case json.Number:
		s.validateNumber(v, add)
	}
	for _, sub := range s.allOf {
		sub.validate(v, path, issues)
	}
	if len(s.anyOf) > 0 {
		var firsts []string
		for _, sub := range s.anyOf {
			var branch []string
			sub.validate(v, path, &branch)
			if len(branch) == 0 {
				return
			}
			firsts = append(firsts, strings.TrimPrefix(branch[0], path+": "))
		}
		add("matches none of the allowed alternatives (%s)", strings.Join(firsts, " | "))
	}
}

func (s *schema) validateObject(obj map[string]any, path string, issues *[]string) {
	for _, name := range s.required {
		if _, ok := obj[name]; !ok && len(*issues) < maxIssues {
			*issues = append(*issues, path+pathKey(name)+": required property is missing")
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		sub, declared := s.properties[k]
		switch {
		case declared:
			sub.validate(obj[k], path+pathKey(k), issues)
		case s.additional != nil:
			s.additional.validate(obj[k], path+pathKey(k), issues)
		case s.noAdditional && len(*issues) < maxIssues:
			*issues = append(*issues, path+pathKey(k)+": property is not allowed")
		}
	}
}

func (s *schema) validateArray(arr []any, path string, issues *[]string, add func(string, ...any)) {
	if s.minItems != nil && len(arr) < *s.minItems {
		add("has %d items, fewer than the minimum %d", len(arr), *s.minItems)
	}
	if s.maxItems != nil && len(arr) > *s.maxItems {
		add("has %d items, more than the maximum %d", len(arr), *s.maxItems)
	}
	if s.items != nil {
		for i, e := range arr {
			s.items.validate(e, path+"["+strconv.Itoa(i)+"]", issues)
		}
	}
}

func (s *schema) validateString(str string, add func(string, ...any)) {
	n := utf8.RuneCountInString(str)
	if s.minLength != nil && n < *s.minLength {
		add("string has %d characters, fewer than the minimum %d", n, *s.minLength)
	}
	if s.maxLength != nil && n > *s.maxLength {
		add("string has %d characters, more than the maximum %d", n, *s.maxLength)
	}
	if s.pattern != nil && !s.pattern.MatchString(str) {
		add("%s does not match pattern %q", brief(str), s.pattern.String())
	}
}

func (s *schema) validateNumber(num json.Number, add func(string, ...any)) {
	x, err := num.Float64()
	if err != nil {
		add("number %s is out of range", num)
		return
	}
	if s.minimum != nil && x < *s.minimum {
		add("%s is less than the minimum %s", num, fmtFloat(*s.minimum))
	}
	if s.maximum != nil && x > *s.maximum {
		add("%s is greater than the maximum %s", num, fmtFloat(*s.maximum))
	}
	if s.exclusiveMinimum != nil && x <= *s.exclusiveMinimum {
		add("%s must be greater than %s", num, fmtFloat(*s.exclusiveMinimum))
	}
	if s.exclusiveMaximum != nil && x >= *s.exclusiveMaximum {
		add("%s must be less than %s", num, fmtFloat(*s.exclusiveMaximum))
	}
}

// hasType reports whether v is of JSON Schema type t.
func hasType(v any, t string) bool {
	switch t {
	case "integer":
		n, ok := v.(json.Number)
		return ok && isInteger(n)
	case "number":
		_, ok := v.(json.Number)
		return ok
	}
	return jsonType(v) == t
}

// isInteger reports whether n has no fractional part (2 and 2.0 qualify).
func isInteger(n json.Number) bool {
	if !strings.ContainsAny(string(n), ".eE") {
		return true
	}
	f, err := n.Float64()
	return err == nil && !math.IsInf(f, 0) && f == math.Trunc(f)
}

// jsonType names v's JSON type.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if isInteger(v) {
			return "integer"
		}
		return "number"
	case float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// equalJSON compares two decoded JSON values; numbers compare by value.
func equalJSON(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		bn, ok := b.(json.Number)
		if !ok {
			return false
		}
		if a == bn {
			return true
		}
		x, err1 := a.Float64()
		y, err2 := bn.Float64()
		return err1 == nil && err2 == nil && x == y
	case []any:
		bs, ok := b.([]any)
		return ok && slices.EqualFunc(a, bs, equalJSON)
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, av := range a {
			bv, ok := bm[k]
			if !ok || !equalJSON(av, bv) {
				return false
			}
		}
		return true
	}
	return a == b
}

// brief renders a value for an error message, shortening long ones.
func brief(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return jsonType(v)
	}
	const limit = 60
	if len(b) > limit {
		return string(b[:limit]) + "…"
	}
	return string(b)
}

// listValues renders enum values for an error message.
func listValues(vals []any) string {
	const limit = 12
	parts := make([]string, 0, min(len(vals), limit)+1)
	for i, v := range vals {
		if i == limit {
			parts = append(parts, fmt.Sprintf("… (%d more)", len(vals)-limit))
			break
		}
		parts = append(parts, brief(v))
	}
	return strings.Join(parts, ", ")
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
