package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// maxIssues bounds how many problems one validation reports.
const maxIssues = 20

// ValidationError lists what is wrong with a document, one path-qualified
// issue per entry, such as "$.findings[2].line_start: got string, want
// integer".
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

// ValidateJSON checks doc against a JSON Schema (draft 2020-12, by
// github.com/santhosh-tekuri/jsonschema; the schema is compiled once and
// reused). A schema that does not compile, or refers to another document,
// is an ErrInvalidRequest; a document that does not conform yields a
// *ValidationError.
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
	return s.validateValue(v)
}

// validateValue runs the validator on a decoded document. The validator
// panics on a number it cannot represent exactly (1e1000010 against a
// "minimum"): such a reply is invalid, not a reason to crash the handler.
func (s *schema) validateValue(v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &ValidationError{Issues: []string{fmt.Sprintf("(document): a value the schema cannot check (%v), e.g. a number out of range", r)}}
		}
	}()
	err = s.s.Validate(v)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return &ValidationError{Issues: issues(ve)}
	}
	return err
}

var printer = message.NewPrinter(language.English)

// issues flattens the validator's tree of errors into sorted, distinct
// "path: problem" lines, at most maxIssues of them.
func issues(ve *jsonschema.ValidationError) []string {
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			// The validator lists unknown properties in map order; sorted,
			// the same reply always gives the same message (and prompt).
			switch k := e.ErrorKind.(type) {
			case *kind.AdditionalProperties:
				slices.Sort(k.Properties)
			case *kind.Required:
				slices.Sort(k.Missing)
			}
			out = append(out, instancePath(e.InstanceLocation)+": "+e.ErrorKind.LocalizedString(printer))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > maxIssues {
		out = out[:maxIssues]
	}
	return out
}
