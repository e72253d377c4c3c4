package llm

import (
	"encoding/json"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// TestRedactRequest checks the last line of defence: a secret that reached
// a message, a tool call or a reply is replaced before the request is sent
// and recorded; tool-call arguments stay valid JSON.
func TestRedactRequest(t *testing.T) {
	const tok = "ghp_3Tz85pkNGcVx2RHLKXSf3wh34LxCnzm8KVby"
	req := openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{
		{Role: "user", Content: "token " + tok},
		{Role: "assistant", ToolCalls: []openai.ToolCall{{Function: openai.FunctionCall{Name: "grep", Arguments: `{"pattern":"x:` + tok + `\"@"}`}}}},
	}}
	got := redactRequest(req, nil)
	body, _ := json.Marshal(got)
	if strings.Contains(string(body), tok) {
		t.Fatalf("token survived: %s", body)
	}
	if !json.Valid([]byte(got.Messages[1].ToolCalls[0].Function.Arguments)) {
		t.Errorf("arguments are no longer JSON: %s", got.Messages[1].ToolCalls[0].Function.Arguments)
	}
	if req.Messages[0].Content != "token "+tok {
		t.Errorf("the caller's request was modified")
	}
	resp := redactResponse(openai.ChatCompletionResponse{Choices: []openai.ChatCompletionChoice{{Message: openai.ChatCompletionMessage{Content: "found " + tok}}}})
	if strings.Contains(resp.Choices[0].Message.Content, tok) {
		t.Errorf("token survived in the reply")
	}
}
