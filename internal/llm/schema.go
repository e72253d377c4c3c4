package llm

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schema is a compiled JSON Schema (draft 2020-12), checked by a
// maintained validator, github.com/santhosh-tekuri/jsonschema.
type schema struct {
	s *jsonschema.Schema
}

// schemaURL is the name a schema is compiled under; nothing is ever
// loaded from it.
const schemaURL = "urn:reviewfleet:schema.json"

// maxCachedSchemas bounds the cache of compiled schemas. A fleet uses a
// handful (one per stage), so the bound only matters to callers that
// validate many one-off schemas.
const maxCachedSchemas = 64

var schemaCache = struct {
	sync.Mutex
	m map[[sha256.Size]byte]*schema
}{m: map[[sha256.Size]byte]*schema{}}

// compileSchema compiles a JSON Schema document, once per distinct
// document: later calls with the same bytes reuse the compiled schema.
func compileSchema(raw json.RawMessage) (*schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("schema is empty")
	}
	key := sha256.Sum256(raw)
	schemaCache.Lock()
	s, ok := schemaCache.m[key]
	schemaCache.Unlock()
	if ok {
		return s, nil
	}
	doc, err := decodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		if _, ok := doc.(bool); !ok {
			return nil, fmt.Errorf("schema: want an object, got %s", jsonType(doc))
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	compiled, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s = &schema{s: compiled}
	schemaCache.Lock()
	if len(schemaCache.m) < maxCachedSchemas {
		schemaCache.m[key] = s
	}
	schemaCache.Unlock()
	return s, nil
}

// noLoader refuses every external reference: a schema must be
// self-contained, and validation never reaches the network or the disk.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema %s is not loaded", url)
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

// instancePath formats a location in the document as "$.findings[2].file".
func instancePath(tokens []string) string {
	var b strings.Builder
	b.WriteString("$")
	for _, t := range tokens {
		if _, err := strconv.Atoi(t); err == nil {
			b.WriteString("[" + t + "]")
			continue
		}
		b.WriteString(pathKey(t))
	}
	return b.String()
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

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
