package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// decodeArgs decodes a tool call's JSON arguments into v, rejecting unknown
// fields and trailing data. Its errors are tool errors that tell the model
// what to fix.
func decodeArgs(tool, raw string, v any) error {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		raw = "{}"
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
			err = errors.New("unexpected data after the JSON object")
		}
	}
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return toolErrorf("%s arguments: %s must be %s, not %s", tool, typeErr.Field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	case errors.As(err, &typeErr):
		return toolErrorf("%s arguments must be a JSON object, not %s", tool, typeErr.Value)
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return toolErrorf("%s arguments are not valid JSON: %v", tool, err)
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return toolErrorf("%s arguments: %s", tool, strings.TrimPrefix(err.Error(), "json: "))
	}
	return toolErrorf("%s arguments: %v", tool, err)
}

// jsonKind names a Go kind the way a JSON schema would.
func jsonKind(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "an integer"
	case strings.HasPrefix(kind, "float"):
		return "a number"
	case kind == "string":
		return "a string"
	case kind == "bool":
		return "a boolean"
	case kind == "slice":
		return "an array"
	case kind == "struct", kind == "map":
		return "an object"
	}
	return "of another type"
}

// canonicalArgs renders arguments with sorted keys and no insignificant
// white space, so equal calls compare equal. Invalid JSON is returned
// trimmed.
func canonicalArgs(raw string) string {
	var v any
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return strings.TrimSpace(raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return strings.TrimSpace(raw)
	}
	return strings.TrimSpace(b.String())
}
