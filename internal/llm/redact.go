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
// Texts in clean (nil: none) are known to hold no secret and are passed as
// they are; texts found clean are added to it.
func redactRequest(req openai.ChatCompletionRequest, clean *recent[string, struct{}]) openai.ChatCompletionRequest {
	r := textRedactor{r: redact.New(), clean: clean}
	for _, m := range req.Messages {
		r.r.Reserve(m.Content)
	}
	msgs := make([]openai.ChatCompletionMessage, len(req.Messages))
	for i, m := range req.Messages {
		m.Content = r.text(m.Content)
		if len(m.MultiContent) > 0 {
			parts := make([]openai.ChatMessagePart, len(m.MultiContent))
			for j, p := range m.MultiContent {
				p.Text = r.text(p.Text)
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

// textRedactor redacts the texts of one request or reply with one
// Redactor, so a secret keeps its marker throughout.
type textRedactor struct {
	r *redact.Redactor
	// clean holds texts known to hold no secret (nil: none). Whether a
	// text holds one does not depend on the texts redacted before it:
	// only the markers given to what is found do.
	clean *recent[string, struct{}]
}

// text redacts s as text.
func (t textRedactor) text(s string) string { return t.remembered(s, t.r.Text) }

// json redacts s as a JSON document (redactJSON).
func (t textRedactor) json(s string) string {
	return t.remembered(s, func(s string) string { return redactJSON(t.r, s) })
}

// remembered applies redact to s unless s is known to be clean, and
// remembers s when redact found nothing in it.
func (t textRedactor) remembered(s string, redact func(string) string) string {
	if t.clean == nil || s == "" {
		return redact(s)
	}
	h := cleanKey(s)
	if _, ok := t.clean.get(h, s); ok {
		return s
	}
	found := t.r.Found()
	out := redact(s)
	if out == s && t.r.Found() == found {
		t.clean.put(h, s, struct{}{}, len(s))
	}
	return out
}

// redactResponse returns resp with secrets replaced in the choices' text,
// for the recorded copy of a reply.
func redactResponse(resp openai.ChatCompletionResponse) openai.ChatCompletionResponse {
	r := textRedactor{r: redact.New()}
	choices := make([]openai.ChatCompletionChoice, len(resp.Choices))
	for i, c := range resp.Choices {
		c.Message.Content = r.text(c.Message.Content)
		c.Message.ReasoningContent = r.text(c.Message.ReasoningContent)
		c.Message.ToolCalls = redactToolCalls(r, c.Message.ToolCalls)
		choices[i] = c
	}
	resp.Choices = choices
	return resp
}

func redactToolCalls(r textRedactor, calls []openai.ToolCall) []openai.ToolCall {
	if len(calls) == 0 {
		return calls
	}
	out := make([]openai.ToolCall, len(calls))
	for i, tc := range calls {
		tc.Function.Arguments = r.json(tc.Function.Arguments)
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
