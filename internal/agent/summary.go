package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	openai "github.com/sashabaranov/go-openai"
)

// errNoModel ends a run that was given no model to talk to.
var errNoModel = errors.New("no chat model configured")

// maxSchemaNameLen is the longest response_format schema name endpoints
// accept.
const maxSchemaNameLen = 64

// checkSummarySchema reports whether the structured reply of the forced
// summarize rounds can be asked for: no schema, or a JSON object with a
// usable name.
func checkSummarySchema(cfg Config) error {
	if len(cfg.SummarySchema) == 0 {
		return nil
	}
	raw := bytes.TrimSpace(cfg.SummarySchema)
	if !json.Valid(raw) || raw[0] != '{' {
		return errors.New("summary schema is not a JSON object")
	}
	if err := checkSchemaName(cfg.SummarySchemaName); err != nil {
		return fmt.Errorf("summary schema name %q: %w", cfg.SummarySchemaName, err)
	}
	return nil
}

// checkSchemaName enforces the schema name rules of OpenAI-compatible
// endpoints: 1 to 64 letters, digits, '_' or '-'.
func checkSchemaName(name string) error {
	if name == "" || len(name) > maxSchemaNameLen {
		return fmt.Errorf("must have 1 to %d characters", maxSchemaNameLen)
	}
	for _, c := range name {
		ok := c == '_' || c == '-' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
		if !ok {
			return fmt.Errorf("character %q is not a letter, digit, '_' or '-'", c)
		}
	}
	return nil
}

// summaryFormat returns the response_format of the forced summarize
// rounds: the summary schema in strict mode, or nil when there is none.
func summaryFormat(cfg Config) *openai.ChatCompletionResponseFormat {
	if len(cfg.SummarySchema) == 0 {
		return nil
	}
	return &openai.ChatCompletionResponseFormat{
		Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
		JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
			Name:   cfg.SummarySchemaName,
			Strict: true,
			Schema: json.RawMessage(bytes.TrimSpace(cfg.SummarySchema)),
		},
	}
}
