package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// StructuredRequest is a single-turn request whose reply must be a JSON
// document conforming to Schema.
type StructuredRequest struct {
	System, User string
	// SchemaName names the schema for the endpoint, such as
	// "reviewfleet_intent" (letters, digits, '_' and '-', at most 64).
	SchemaName string
	// Schema is a JSON Schema with an object at the root; it is sent with
	// strict: true and checked locally with ValidateJSON.
	Schema      json.RawMessage
	MaxTokens   int
	Temperature float32
}

// Usage sums what a structured call spent across its attempts.
type Usage struct {
	PromptTokens, CompletionTokens int
	// Calls counts HTTP requests, transport retries and the repair included.
	Calls   int
	Latency time.Duration
}

func (u *Usage) add(s callStats) {
	u.PromptTokens += s.tokensIn
	u.CompletionTokens += s.tokensOut
	u.Calls += s.attempts
	u.Latency += s.latency
}

var schemaNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Structured asks for a JSON reply conforming to req.Schema and decodes it
// into out, which must be a non-nil pointer. The request carries
// response_format json_schema with strict: true; because some servers ignore
// it, the reply is read with ExtractJSON and checked with ValidateJSON. A
// reply that fails either gets one repair attempt: the model sees its reply
// and the problem and is asked for corrected JSON only. If that also fails
// the error is a *InvalidReplyError with the reason and the raw reply. out
// is only written when a reply is accepted.
func (c *Client) Structured(ctx context.Context, meta Meta, req StructuredRequest, out any) (Usage, error) {
	var usage Usage
	target, err := decodeTarget(out)
	if err != nil {
		return usage, fmt.Errorf("structured call %q: %w: %w", req.SchemaName, ErrInvalidRequest, err)
	}
	if !schemaNameRE.MatchString(req.SchemaName) {
		return usage, fmt.Errorf("structured call: schema name %q must be 1-64 letters, digits, '_' or '-': %w", req.SchemaName, ErrInvalidRequest)
	}
	sch, err := compileSchema(req.Schema)
	if err != nil {
		return usage, fmt.Errorf("structured call %q: %w: %w", req.SchemaName, ErrInvalidRequest, err)
	}
	if strings.TrimSpace(req.User) == "" {
		return usage, fmt.Errorf("structured call %q: user message is empty: %w", req.SchemaName, ErrInvalidRequest)
	}

	chat := structuredChat(meta, req)
	check := func(resp openai.ChatCompletionResponse) error {
		return acceptReply(sch, resp.Choices[0].Message, target)
	}
	_, stats, err := c.call(ctx, meta, chat, check)
	usage.add(stats)
	var inv *InvalidReplyError
	if err == nil || !errors.As(err, &inv) {
		return usage, err
	}

	chat.Messages = append(chat.Messages,
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: orPlaceholder(inv.Raw)},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: repairPrompt(inv.Reason)},
	)
	_, stats, err = c.call(ctx, meta, chat, check)
	usage.add(stats)
	if err != nil {
		return usage, fmt.Errorf("after one repair attempt: %w", err)
	}
	return usage, nil
}

// structuredChat builds the chat request of a structured call.
func structuredChat(meta Meta, req StructuredRequest) openai.ChatCompletionRequest {
	var msgs []openai.ChatCompletionMessage
	if strings.TrimSpace(req.System) != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: req.System})
	}
	msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: req.User})
	chat := openai.ChatCompletionRequest{
		Model:    meta.Model,
		Messages: msgs,
		ResponseFormat: &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name:   req.SchemaName,
				Schema: req.Schema,
				Strict: true,
			},
		},
	}
	if isReasoningModel(meta.Model) {
		// Reasoning models take max_completion_tokens and a fixed temperature.
		chat.MaxCompletionTokens = req.MaxTokens
	} else {
		//lint:ignore SA1019 max_tokens is what most OpenAI-compatible servers accept; reasoning models get max_completion_tokens
		chat.MaxTokens = req.MaxTokens
		chat.Temperature = req.Temperature
	}
	return chat
}

// isReasoningModel reports whether model belongs to a family that rejects
// max_tokens and custom temperatures.
func isReasoningModel(model string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// acceptReply extracts, validates and decodes the reply message into
// target; any failure is an *InvalidReplyError.
func acceptReply(sch *schema, msg openai.ChatCompletionMessage, target reflect.Value) error {
	raw := msg.Content
	if raw == "" && msg.Refusal != "" {
		return &InvalidReplyError{Reason: "the model refused: " + msg.Refusal, Raw: msg.Refusal}
	}
	doc, err := ExtractJSON(raw)
	if err != nil {
		return &InvalidReplyError{Reason: err.Error(), Raw: raw}
	}
	if err := sch.validateDoc(doc); err != nil {
		return &InvalidReplyError{Reason: "reply does not match the schema: " + err.Error(), Raw: raw}
	}
	fresh := reflect.New(target.Type().Elem())
	if err := json.Unmarshal(doc, fresh.Interface()); err != nil {
		return &InvalidReplyError{Reason: "decode reply: " + err.Error(), Raw: raw}
	}
	target.Elem().Set(fresh.Elem())
	return nil
}

// decodeTarget checks that out is a non-nil pointer.
func decodeTarget(out any) (reflect.Value, error) {
	v := reflect.ValueOf(out)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() {
		return reflect.Value{}, fmt.Errorf("out must be a non-nil pointer, got %T", out)
	}
	return v, nil
}

// repairPrompt asks the model to fix its previous reply.
func repairPrompt(reason string) string {
	return "Your previous reply could not be used: " + reason + "\n" +
		"Reply again with only the corrected JSON document that satisfies the schema: " +
		"no explanations, no code fences."
}

func orPlaceholder(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(empty reply)"
	}
	return s
}
