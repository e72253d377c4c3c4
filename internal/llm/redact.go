package llm

import (
	"encoding/json"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/redact"
)

// redactRequest returns req with secrets replaced in every message's text
// and tool-call arguments. Stages redact their inputs already; this is the
// last line before the network and the llm_calls table, for text that
// reached a prompt by another road.
func redactRequest(req openai.ChatCompletionRequest) openai.ChatCompletionRequest {
	r := redact.New()
	for _, m := range req.Messages {
		r.Reserve(m.Content)
	}
	msgs := make([]openai.ChatCompletionMessage, len(req.Messages))
	for i, m := range req.Messages {
		m.Content = r.Text(m.Content)
		if len(m.MultiContent) > 0 {
			parts := make([]openai.ChatMessagePart, len(m.MultiContent))
			for j, p := range m.MultiContent {
				p.Text = r.Text(p.Text)
				parts[j] = p
			}
			m.MultiContent = parts
		}
		m.ToolCalls = redactToolCalls(r, m.ToolCalls)
		msgs[i] = m
	}
	req.Messages = msgs
	return req
}

// redactResponse returns resp with secrets replaced in the choices' text,
// for the recorded copy of a reply.
func redactResponse(resp openai.ChatCompletionResponse) openai.ChatCompletionResponse {
	r := redact.New()
	choices := make([]openai.ChatCompletionChoice, len(resp.Choices))
	for i, c := range resp.Choices {
		c.Message.Content = r.Text(c.Message.Content)
		c.Message.ReasoningContent = r.Text(c.Message.ReasoningContent)
		c.Message.ToolCalls = redactToolCalls(r, c.Message.ToolCalls)
		choices[i] = c
	}
	resp.Choices = choices
	return resp
}

func redactToolCalls(r *redact.Redactor, calls []openai.ToolCall) []openai.ToolCall {
	if len(calls) == 0 {
		return calls
	}
	out := make([]openai.ToolCall, len(calls))
	for i, tc := range calls {
		tc.Function.Arguments = redactJSON(r, tc.Function.Arguments)
		out[i] = tc
	}
	return out
}

// redactJSON redacts the string values of a JSON document, so a marker can
// never cut an escape sequence in two; text that is not JSON is redacted
// as text. A document without secrets is returned as it was.
func redactJSON(r *redact.Redactor, doc string) string {
	var v any
	if json.Unmarshal([]byte(doc), &v) != nil {
		return r.Text(doc)
	}
	changed := false
	var walk func(any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case string:
			s := r.Text(t)
			changed = changed || s != t
			return s
		case []any:
			for i := range t {
				t[i] = walk(t[i])
			}
		case map[string]any:
			for k := range t {
				t[k] = walk(t[k])
			}
		}
		return x
	}
	v = walk(v)
	if !changed {
		return doc
	}
	out, err := json.Marshal(v)
	if err != nil {
		return r.Text(doc)
	}
	return string(out)
}
