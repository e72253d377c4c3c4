package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

// fakeLLM drives Run through the real go-openai client against the fake
// OpenAI-compatible server of package llmfake, recording the request bodies
// exactly as the client sent them.
type fakeLLM struct {
	srv *llmfake.Server
	rec *bodyRecorder
}

// newFakeLLM starts a fake server answering with h. Replies without token
// counts report 100 prompt and 10 completion tokens, so tests can check the
// accounting.
func newFakeLLM(t *testing.T, h llmfake.Handler) *fakeLLM {
	t.Helper()
	srv := llmfake.New(func(ctx context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		r := h(ctx, req)
		if r.PromptTokens == 0 && r.CompletionTokens == 0 {
			r.PromptTokens, r.CompletionTokens = 100, 10
		}
		return r
	})
	t.Cleanup(srv.Close)
	return &fakeLLM{srv: srv, rec: &bodyRecorder{}}
}

// indexed adapts a handler that picks its reply by the request's position
// (0-based).
func indexed(f func(n int) llmfake.Reply) llmfake.Handler {
	var n atomic.Int64
	return func(context.Context, openai.ChatCompletionRequest) llmfake.Reply {
		return f(int(n.Add(1) - 1))
	}
}

// requests returns the requests received so far.
func (f *fakeLLM) requests() []openai.ChatCompletionRequest { return f.srv.Requests() }

// allBodies returns every request received so far, encoded as JSON.
func (f *fakeLLM) allBodies(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, r := range f.srv.Requests() {
		if err := enc.Encode(r); err != nil {
			t.Fatalf("encode request: %v", err)
		}
	}
	return b.String()
}

// model returns a go-openai client pointed at the fake server.
func (f *fakeLLM) model() ChatModel {
	cfg := openai.DefaultConfig("test-key")
	cfg.BaseURL = f.srv.URL
	cfg.HTTPClient = &http.Client{Transport: f.rec}
	return clientModel{openai.NewClientWithConfig(cfg)}
}

// rawRequest is the part of a request body, as sent on the wire, that the
// tests inspect.
type rawRequest struct {
	ToolChoice     json.RawMessage `json:"tool_choice"`
	ResponseFormat json.RawMessage `json:"response_format"`
	Tools          []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// rawRequests decodes the request bodies the client sent, in order.
func (f *fakeLLM) rawRequests(t *testing.T) []rawRequest {
	t.Helper()
	bodies := f.rec.all()
	out := make([]rawRequest, len(bodies))
	for i, b := range bodies {
		if err := json.Unmarshal(b, &out[i]); err != nil {
			t.Fatalf("decode request body %d: %v", i+1, err)
		}
	}
	return out
}

// bodyRecorder is an HTTP transport that keeps a copy of every request
// body before passing the request on.
type bodyRecorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (b *bodyRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		data, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		b.mu.Lock()
		b.bodies = append(b.bodies, data)
		b.mu.Unlock()
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(data))
	}
	return http.DefaultTransport.RoundTrip(req)
}

func (b *bodyRecorder) all() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([][]byte(nil), b.bodies...)
}

// clientModel adapts the go-openai client to ChatModel.
type clientModel struct{ c *openai.Client }

func (m clientModel) Chat(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return m.c.CreateChatCompletion(ctx, req)
}

// toolMessages returns the contents of the tool messages of req, in order.
func toolMessages(req openai.ChatCompletionRequest) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleTool {
			out = append(out, m.Content)
		}
	}
	return out
}

// lastUserMessage returns the content of the last user message of req.
func lastUserMessage(req openai.ChatCompletionRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == openai.ChatMessageRoleUser {
			return req.Messages[i].Content
		}
	}
	return ""
}
