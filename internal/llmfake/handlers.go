package llmfake

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// SchemaName returns the name of the request's json_schema response format,
// or "" when it asks for none.
func SchemaName(req openai.ChatCompletionRequest) string {
	if req.ResponseFormat == nil || req.ResponseFormat.JSONSchema == nil {
		return ""
	}
	return req.ResponseFormat.JSONSchema.Name
}

// LastUser returns the text of the last user message, or "".
func LastUser(req openai.ChatCompletionRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != openai.ChatMessageRoleUser {
			continue
		}
		return messageText(m)
	}
	return ""
}

// Script answers the nth request with the nth reply. Requests past the end
// get a 500 whose message says the script ran out.
func Script(replies ...Reply) Handler {
	var n atomic.Int64
	return func(context.Context, openai.ChatCompletionRequest) Reply {
		i := int(n.Add(1))
		if i > len(replies) {
			return Fail(http.StatusInternalServerError,
				fmt.Sprintf("llmfake: the script has %d replies and request %d is past its end", len(replies), i))
		}
		return replies[i-1]
	}
}

// Sequence hands the nth request to the nth handler; once past the end, the
// last handler answers every further request. With no handlers every
// request gets a 500.
func Sequence(handlers ...Handler) Handler {
	var n atomic.Int64
	return func(ctx context.Context, req openai.ChatCompletionRequest) Reply {
		if len(handlers) == 0 {
			return Fail(http.StatusInternalServerError, "llmfake: the sequence has no handlers")
		}
		i := min(int(n.Add(1)), len(handlers))
		return handlers[i-1](ctx, req)
	}
}

// BySchema routes a request by its json_schema name. Requests whose name is
// not in m go to fallback; with no fallback they get a 400 naming the schema.
func BySchema(m map[string]Handler, fallback Handler) Handler {
	return func(ctx context.Context, req openai.ChatCompletionRequest) Reply {
		name := SchemaName(req)
		if h, ok := m[name]; ok && h != nil {
			return h(ctx, req)
		}
		if fallback != nil {
			return fallback(ctx, req)
		}
		return Fail(http.StatusBadRequest, fmt.Sprintf("llmfake: no handler for schema %q", name))
	}
}

// Static answers every request with r.
func Static(r Reply) Handler {
	return func(context.Context, openai.ChatCompletionRequest) Reply { return r }
}

// Text is a successful reply with content s.
func Text(s string) Reply { return Reply{Content: s} }

// JSON is a successful reply whose content is v encoded as JSON; a value
// that cannot be encoded yields a 500 saying why.
func JSON(v any) Reply {
	b, err := json.Marshal(v)
	if err != nil {
		return Fail(http.StatusInternalServerError, "llmfake: encode reply: "+err.Error())
	}
	return Reply{Content: string(b)}
}

// Tools is a successful reply that calls the given tools.
func Tools(calls ...openai.ToolCall) Reply { return Reply{ToolCalls: calls} }

// Fail is an error reply with status and message.
func Fail(status int, msg string) Reply { return Reply{Status: status, Content: msg} }

// RateLimited is a 429 reply carrying Retry-After (whole seconds, rounded
// up) and retry-after-ms.
func RateLimited(retryAfter time.Duration) Reply {
	secs := int64((retryAfter + time.Second - 1) / time.Second)
	return Reply{
		Status:  http.StatusTooManyRequests,
		Content: "Rate limit reached; please retry later.",
		Headers: map[string]string{
			"Retry-After":    strconv.FormatInt(secs, 10),
			"retry-after-ms": strconv.FormatInt(retryAfter.Milliseconds(), 10),
		},
	}
}

var toolCallIDs atomic.Int64

// ToolCall builds a function tool call with a unique ID. args that are a
// string, []byte or json.RawMessage are used verbatim as the arguments;
// anything else is encoded as JSON.
func ToolCall(name string, args any) openai.ToolCall {
	var text string
	switch a := args.(type) {
	case string:
		text = a
	case []byte:
		text = string(a)
	case json.RawMessage:
		text = string(a)
	case nil:
		text = "{}"
	default:
		b, err := json.Marshal(a)
		if err != nil {
			b, _ = json.Marshal("llmfake: cannot encode tool arguments: " + err.Error())
		}
		text = string(b)
	}
	return openai.ToolCall{
		ID:       fmt.Sprintf("call_fake_%d", toolCallIDs.Add(1)),
		Type:     openai.ToolTypeFunction,
		Function: openai.FunctionCall{Name: name, Arguments: text},
	}
}
