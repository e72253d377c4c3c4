package llmfake

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Handler chooses the reply to one chat completion request. ctx is done when
// the client goes away or the server closes.
type Handler func(ctx context.Context, req openai.ChatCompletionRequest) Reply

// Reply is what the server answers to one request.
type Reply struct {
	// Content is the assistant message; for an error status it is the error
	// message (default: the status text).
	Content string
	// ToolCalls are returned with finish_reason "tool_calls".
	ToolCalls []openai.ToolCall
	// Reasoning is returned as the message's reasoning_content (the
	// thinking of reasoning models).
	Reasoning string
	// Status 0 or 200 answers normally; anything else answers with an
	// OpenAI-style error body and this status.
	Status int
	// Headers are set on the response, such as "Retry-After": "1".
	Headers map[string]string
	// Delay is waited before answering; a cancelled request stops waiting
	// and gets no answer.
	Delay time.Duration
	// Raw, when set, is written verbatim as the body (malformed replies).
	Raw string
	// PromptTokens and CompletionTokens are reported as usage; zero values
	// are estimated from the text lengths (a quarter of the characters).
	PromptTokens, CompletionTokens int
	// FinishReason overrides the finish_reason of a successful reply
	// (default "stop", or "tool_calls" with ToolCalls).
	FinishReason openai.FinishReason
}

// DefaultModels is what GET /v1/models lists.
var DefaultModels = []string{"fake-model"}

// maxBody bounds a request body.
const maxBody = 32 << 20

// Server is a running fake endpoint on 127.0.0.1.
type Server struct {
	// URL is the base URL to configure the client with; it ends in "/v1".
	URL string

	handler  Handler
	srv      *http.Server
	listener net.Listener
	closed   context.Context // done once Close starts; cancels handlers
	shutdown context.CancelFunc
	served   chan struct{} // closed when Serve returns
	inflight sync.WaitGroup
	ids      atomic.Int64
	closing  sync.Once
	gauge    gauge

	mu       sync.Mutex
	requests []openai.ChatCompletionRequest
}

// New starts a server that answers with h (FromSchema when h is nil). Like
// httptest.NewServer it panics if no local port can be opened; Start returns
// that error instead.
func New(h Handler) *Server {
	s, err := Start(h)
	if err != nil {
		panic(fmt.Sprintf("llmfake: %v", err))
	}
	return s
}

// Start starts a server that answers with h (FromSchema when h is nil) on a
// free port of 127.0.0.1.
func Start(h Handler) (*Server, error) { return StartAt("127.0.0.1:0", h) }

// StartAt is Start listening on addr ("host:port"; port 0 picks a free one).
func StartAt(addr string, h Handler) (*Server, error) {
	if h == nil {
		h = func(_ context.Context, req openai.ChatCompletionRequest) Reply { return FromSchema(req) }
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("start fake LLM server: listen: %w", err)
	}
	s := &Server{
		URL:      "http://" + ln.Addr().String() + "/v1",
		handler:  h,
		listener: ln,
		served:   make(chan struct{}),
	}
	s.closed, s.shutdown = context.WithCancel(context.Background())
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /models", s.models)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Close stops the server, cancels requests in flight, closes every
// connection and waits for the handlers to return. It is safe to call more
// than once.
func (s *Server) Close() {
	s.closing.Do(func() {
		s.shutdown()
		_ = s.srv.Close()
		<-s.served
		s.inflight.Wait()
	})
}

// Requests returns every chat completion request received, in order.
func (s *Server) Requests() []openai.ChatCompletionRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]openai.ChatCompletionRequest, len(s.requests))
	copy(out, s.requests)
	return out
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	s.inflight.Add(1)
	defer s.inflight.Done()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(s.closed, cancel)
	defer stop()

	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		writeError(w, http.StatusBadRequest, "read request body: "+err.Error(), nil)
		return
	}
	var req openai.ChatCompletionRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "request body is not a chat completion request: "+err.Error(), nil)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	s.gauge.move(1)
	defer s.gauge.move(-1)

	reply := s.handler(ctx, req)
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
	for k, v := range reply.Headers {
		w.Header().Set(k, v)
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	switch {
	case reply.Raw != "":
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply.Raw)
	case status != http.StatusOK:
		writeError(w, status, reply.Content, nil)
	default:
		writeJSON(w, http.StatusOK, s.completion(req, reply))
	}
}

// completion builds the success body for reply.
func (s *Server) completion(req openai.ChatCompletionRequest, reply Reply) openai.ChatCompletionResponse {
	finish := openai.FinishReasonStop
	if len(reply.ToolCalls) > 0 {
		finish = openai.FinishReasonToolCalls
	}
	if reply.FinishReason != "" {
		finish = reply.FinishReason
	}
	in, out := reply.PromptTokens, reply.CompletionTokens
	if in == 0 {
		in = estimatePrompt(req)
	}
	if out == 0 {
		n := len(reply.Content)
		for _, tc := range reply.ToolCalls {
			n += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
		out = max(1, (n+3)/4)
	}
	return openai.ChatCompletionResponse{
		ID:      fmt.Sprintf("chatcmpl-fake-%d", s.ids.Add(1)),
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   req.Model,
		Choices: []openai.ChatCompletionChoice{{
			Index: 0,
			Message: openai.ChatCompletionMessage{
				Role:             openai.ChatMessageRoleAssistant,
				Content:          reply.Content,
				ReasoningContent: reply.Reasoning,
				ToolCalls:        reply.ToolCalls,
			},
			FinishReason: finish,
		}},
		Usage: openai.Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out},
	}
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list"}
	for _, id := range DefaultModels {
		list.Data = append(list.Data, model{ID: id, Object: "model", OwnedBy: "llmfake"})
	}
	writeJSON(w, http.StatusOK, list)
}

// estimatePrompt guesses prompt tokens as a quarter of the message text.
func estimatePrompt(req openai.ChatCompletionRequest) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content)
		for _, p := range m.MultiContent {
			n += len(p.Text)
		}
		for _, tc := range m.ToolCalls {
			n += len(tc.Function.Arguments)
		}
	}
	return max(1, (n+3)/4)
}

// errorType maps a status to the OpenAI error type string.
func errorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_exceeded"
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// writeError writes an OpenAI-style error body.
func writeError(w http.ResponseWriter, status int, msg string, code any) {
	if strings.TrimSpace(msg) == "" {
		msg = http.StatusText(status)
	}
	body := map[string]any{"error": map[string]any{
		"message": msg, "type": errorType(status), "param": nil, "code": code,
	}}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
