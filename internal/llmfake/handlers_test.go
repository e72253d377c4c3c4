package llmfake_test

import (
	"context"
	"encoding/json"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

func withSchema(name, schema string) openai.ChatCompletionRequest {
	r := userReq("go")
	r.ResponseFormat = &openai.ChatCompletionResponseFormat{
		Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
		JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
			Name: name, Schema: json.RawMessage(schema), Strict: true,
		},
	}
	return r
}

func TestSchemaNameAndLastUser(t *testing.T) {
	t.Parallel()
	if got := llmfake.SchemaName(userReq("x")); got != "" {
		t.Errorf("SchemaName without format = %q", got)
	}
	if got := llmfake.SchemaName(withSchema("reviewfleet_eval", `{}`)); got != "reviewfleet_eval" {
		t.Errorf("SchemaName = %q", got)
	}
	req := openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: "sys"},
		{Role: "user", Content: "first"},
		{Role: "assistant", Content: "reply"},
		{Role: "user", MultiContent: []openai.ChatMessagePart{{Type: "text", Text: "part a"}, {Type: "text", Text: "part b"}}},
		{Role: "tool", Content: "tool output"},
	}}
	if got := llmfake.LastUser(req); got != "part a\npart b" {
		t.Errorf("LastUser = %q", got)
	}
	if got := llmfake.LastUser(openai.ChatCompletionRequest{}); got != "" {
		t.Errorf("LastUser of no messages = %q", got)
	}
}

func TestBySchemaAndSequence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := llmfake.BySchema(map[string]llmfake.Handler{
		"reviewfleet_intent": llmfake.Static(llmfake.Text("intent")),
	}, nil)
	if got := h(ctx, withSchema("reviewfleet_intent", `{}`)); got.Content != "intent" {
		t.Errorf("routed reply = %+v", got)
	}
	if got := h(ctx, withSchema("reviewfleet_other", `{}`)); got.Status != 400 || got.Content == "" {
		t.Errorf("unknown schema without fallback = %+v", got)
	}
	withFallback := llmfake.BySchema(nil, llmfake.Static(llmfake.Text("fallback")))
	if got := withFallback(ctx, userReq("x")); got.Content != "fallback" {
		t.Errorf("fallback reply = %+v", got)
	}

	seq := llmfake.Sequence(llmfake.Static(llmfake.RateLimited(0)), llmfake.Static(llmfake.Text("ok")))
	var statuses []int
	for range 3 {
		statuses = append(statuses, seq(ctx, userReq("x")).Status)
	}
	if statuses[0] != 429 || statuses[1] != 0 || statuses[2] != 0 {
		t.Errorf("sequence statuses = %v, want 429 then the last handler repeating", statuses)
	}
	if got := llmfake.Sequence()(ctx, userReq("x")); got.Status != 500 {
		t.Errorf("empty sequence = %+v", got)
	}
	if got := llmfake.JSON(map[string]int{"a": 1}); got.Content != `{"a":1}` {
		t.Errorf("JSON reply = %+v", got)
	}
	if got := llmfake.JSON(make(chan int)); got.Status != 500 {
		t.Errorf("unencodable JSON reply = %+v", got)
	}
}
