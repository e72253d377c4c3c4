package llmfake_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.uber.org/goleak"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// start runs a fake server and a go-openai client pointed at it.
func start(t *testing.T, h llmfake.Handler) (*llmfake.Server, *openai.Client) {
	t.Helper()
	srv := llmfake.New(h)
	t.Cleanup(srv.Close)
	cfg := openai.DefaultConfig("test-key")
	cfg.BaseURL = srv.URL
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	cfg.HTTPClient = &http.Client{Transport: tr}
	return srv, openai.NewClientWithConfig(cfg)
}

func userReq(content string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model:    "fake-model",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: content}},
	}
}

func TestToolCallsRoundTrip(t *testing.T) {
	t.Parallel()
	call := llmfake.ToolCall("read_file", map[string]any{"path": "main.go", "start": 1, "end": 40})
	srv, client := start(t, llmfake.Script(llmfake.Tools(call), llmfake.Text("done")))
	req := userReq("look at main.go")
	req.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "read_file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`),
	}}}
	resp, err := client.CreateChatCompletion(context.Background(), req)
	if err != nil {
		t.Fatalf("first call: %v", err)
	}
	choice := resp.Choices[0]
	if choice.FinishReason != openai.FinishReasonToolCalls || len(choice.Message.ToolCalls) != 1 {
		t.Fatalf("choice = %+v", choice)
	}
	got := choice.Message.ToolCalls[0]
	if got.ID != call.ID || got.ID == "" || got.Type != openai.ToolTypeFunction || got.Function.Name != "read_file" {
		t.Errorf("tool call = %+v, want %+v", got, call)
	}
	var args struct {
		Path       string
		Start, End int
	}
	if err := json.Unmarshal([]byte(got.Function.Arguments), &args); err != nil || args.Path != "main.go" || args.End != 40 {
		t.Errorf("arguments %q decode to %+v (%v)", got.Function.Arguments, args, err)
	}

	// The client answers the tool call; the server sees the whole exchange.
	req.Messages = append(req.Messages, choice.Message, openai.ChatCompletionMessage{
		Role: openai.ChatMessageRoleTool, ToolCallID: got.ID, Content: "package main",
	})
	resp, err = client.CreateChatCompletion(context.Background(), req)
	if err != nil || resp.Choices[0].Message.Content != "done" || resp.Choices[0].FinishReason != openai.FinishReasonStop {
		t.Fatalf("second call = %+v, %v", resp, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	if len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Function.Name != "read_file" {
		t.Errorf("server saw tools %+v", reqs[0].Tools)
	}
	last := reqs[1].Messages[2]
	if last.Role != "tool" || last.ToolCallID != got.ID || reqs[1].Messages[1].ToolCalls[0].Function.Name != "read_file" {
		t.Errorf("server saw messages %+v", reqs[1].Messages)
	}
	if resp.Usage.PromptTokens <= 0 || resp.Usage.CompletionTokens <= 0 {
		t.Errorf("usage not estimated: %+v", resp.Usage)
	}
}

func TestToolCallArguments(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args any
		want string
	}{
		{`{"raw":true}`, `{"raw":true}`},
		{json.RawMessage(`{"a":1}`), `{"a":1}`},
		{[]byte(`{"b":2}`), `{"b":2}`},
		{nil, `{}`},
		{struct {
			Pattern string `json:"pattern"`
		}{"TODO"}, `{"pattern":"TODO"}`},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		c := llmfake.ToolCall("grep", tc.args)
		if c.Function.Arguments != tc.want {
			t.Errorf("ToolCall(%v) arguments = %q, want %q", tc.args, c.Function.Arguments, tc.want)
		}
		if seen[c.ID] {
			t.Errorf("duplicate tool call ID %q", c.ID)
		}
		seen[c.ID] = true
	}
	if bad := llmfake.ToolCall("x", make(chan int)); !strings.Contains(bad.Function.Arguments, "cannot encode") {
		t.Errorf("unencodable arguments = %q", bad.Function.Arguments)
	}
}

func TestErrorStatuses(t *testing.T) {
	t.Parallel()
	_, client := start(t, llmfake.Script(
		llmfake.Fail(503, "overloaded"),
		llmfake.RateLimited(1500*time.Millisecond),
		llmfake.Reply{Status: 400},
	))
	_, err := client.CreateChatCompletion(context.Background(), userReq("a"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 503 || apiErr.Message != "overloaded" || apiErr.Type != "server_error" {
		t.Errorf("503: %v", err)
	}
	_, err = client.CreateChatCompletion(context.Background(), userReq("b"))
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 || apiErr.Type != "rate_limit_exceeded" {
		t.Errorf("429: %v", err)
	}
	_, err = client.CreateChatCompletion(context.Background(), userReq("c"))
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 || apiErr.Message != "Bad Request" {
		t.Errorf("400 without message: %v", err)
	}
	// Past the end of the script: a 500 that says so.
	_, err = client.CreateChatCompletion(context.Background(), userReq("d"))
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 || !strings.Contains(apiErr.Message, "request 4 is past its end") {
		t.Errorf("past the script: %v", err)
	}
}

func TestHeadersAndRawBodies(t *testing.T) {
	t.Parallel()
	srv, client := start(t, llmfake.Script(
		llmfake.RateLimited(1500*time.Millisecond),
		llmfake.Reply{Raw: `{"choices": [`},
		llmfake.Reply{Status: 502, Raw: "<html>bad gateway</html>", Headers: map[string]string{"Content-Type": "text/html"}},
	))
	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || resp.Header.Get("retry-after-ms") != "1500" {
		t.Errorf("429 reply: status %d headers %v", resp.StatusCode, resp.Header)
	}

	_, err = client.CreateChatCompletion(context.Background(), userReq("malformed"))
	var syntax *json.SyntaxError
	if err == nil || (!errors.As(err, &syntax) && !errors.Is(err, io.ErrUnexpectedEOF)) {
		t.Errorf("malformed body: %v", err)
	}
	_, err = client.CreateChatCompletion(context.Background(), userReq("html"))
	var reqErr *openai.RequestError
	if !errors.As(err, &reqErr) || reqErr.HTTPStatusCode != 502 || !strings.Contains(string(reqErr.Body), "bad gateway") {
		t.Errorf("html 502: %v", err)
	}
}

func TestBadRequestBody(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, llmfake.Static(llmfake.Text("unused")))
	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(`{"messages": 5}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "not a chat completion request") {
		t.Errorf("status %d body %s", resp.StatusCode, body)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("recorded %d undecodable requests", n)
	}
}

func TestDelayAndCancellation(t *testing.T) {
	t.Parallel()
	srv, client := start(t, llmfake.Script(
		llmfake.Reply{Content: "slow", Delay: 30 * time.Millisecond},
		llmfake.Reply{Content: "never", Delay: time.Minute},
	))
	start := time.Now()
	resp, err := client.CreateChatCompletion(context.Background(), userReq("a"))
	if err != nil || resp.Choices[0].Message.Content != "slow" {
		t.Fatalf("delayed reply = %+v, %v", resp, err)
	}
	if time.Since(start) < 30*time.Millisecond {
		t.Errorf("the delay was not applied")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = client.CreateChatCompletion(ctx, userReq("b"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled call = %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("cancellation took %v", time.Since(start))
	}
	// Close does not wait out the minute-long delay.
	start = time.Now()
	srv.Close()
	srv.Close()
	if time.Since(start) > 5*time.Second {
		t.Errorf("Close took %v", time.Since(start))
	}
}

func TestCloseCancelsInFlight(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{})
	srv, client := start(t, func(ctx context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		close(entered)
		return llmfake.Reply{Content: "late", Delay: time.Minute}
	})
	errc := make(chan error, 1)
	go func() {
		_, err := client.CreateChatCompletion(context.Background(), userReq("a"))
		errc <- err
	}()
	<-entered
	srv.Close()
	select {
	case err := <-errc:
		if err == nil {
			t.Error("request in flight succeeded after Close")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("request in flight still pending after Close")
	}
}

func TestModels(t *testing.T) {
	t.Parallel()
	_, client := start(t, llmfake.Static(llmfake.Text("x")))
	list, err := client.ListModels(context.Background())
	if err != nil || len(list.Models) == 0 || list.Models[0].ID != "fake-model" {
		t.Errorf("models = %+v, %v", list, err)
	}
}

func TestRequestsInOrder(t *testing.T) {
	t.Parallel()
	srv, client := start(t, llmfake.Static(llmfake.Text("ok")))
	for _, s := range []string{"one", "two", "three"} {
		if _, err := client.CreateChatCompletion(context.Background(), userReq(s)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, r := range srv.Requests() {
		got = append(got, llmfake.LastUser(r))
	}
	if strings.Join(got, ",") != "one,two,three" {
		t.Errorf("requests = %v", got)
	}
}
