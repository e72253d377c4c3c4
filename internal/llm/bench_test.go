package llm

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// benchReply is a prose-wrapped, fenced reply with 20 findings.
func benchReply() string {
	var items []string
	for i := range 20 {
		items = append(items, fmt.Sprintf(`{"risk_type": "robustness", "line_start": %d, "confidence": 0.%d}`, i+1, i%10))
	}
	return "Here are the findings:\n```json\n{\"findings\": [" + strings.Join(items, ",\n") + "]}\n```\nDone."
}

func BenchmarkExtractAndValidate(b *testing.B) {
	reply := benchReply()
	schema := json.RawMessage(findingsSchema)
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		doc, err := ExtractJSON(reply)
		if err != nil {
			b.Fatal(err)
		}
		if err := ValidateJSON(schema, doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateCompiled(b *testing.B) {
	doc, err := ExtractJSON(benchReply())
	if err != nil {
		b.Fatal(err)
	}
	s, err := compileSchema(json.RawMessage(findingsSchema))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.validateDoc(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// expertConversation is an expert run's requests as they grow: a system
// prompt, a diff, then rounds of a tool call and its result, each request
// resending everything before it. The texts are this package's sources.
func expertConversation(b *testing.B, rounds int) []openai.ChatCompletionRequest {
	b.Helper()
	var texts []string
	for _, name := range []string{"chat.go", "attempt.go", "client.go", "pool.go", "limiter.go", "structured.go", "record.go", "redact.go"} {
		data, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		texts = append(texts, string(data))
	}
	msgs := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: texts[0][:2000]},
		{Role: openai.ChatMessageRoleUser, Content: strings.Join(texts, "\n")},
	}
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "grep", Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}}}`)}}}
	var reqs []openai.ChatCompletionRequest
	for i := range rounds {
		reqs = append(reqs, openai.ChatCompletionRequest{Model: "m", Messages: slices.Clone(msgs), Tools: tools})
		id := fmt.Sprint("call_", i)
		text := texts[i%len(texts)]
		msgs = append(msgs,
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{ID: id, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: "grep", Arguments: fmt.Sprintf(`{"pattern":"func %d"}`, i)}}}},
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: id, Content: text[:min(len(text), 3000)]})
	}
	return reqs
}

// BenchmarkPrepareConversation is what the client does before sending
// each call of a 12-round expert conversation and what recording its
// request takes: redaction, the prompt hash and the parts to store.
func BenchmarkPrepareConversation(b *testing.B) {
	reqs := expertConversation(b, 12)
	var size int64
	for _, r := range reqs {
		for _, m := range r.Messages {
			size += int64(len(m.Content))
		}
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		// A client of its own: nothing is remembered from another run.
		c, err := New(Config{BaseURL: "http://127.0.0.1:1", APIKey: "k"})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range reqs {
			p, err := c.prepare(testMeta, r, nil)
			if err != nil || p.parts == nil {
				b.Fatal(err)
			}
		}
	}
}
