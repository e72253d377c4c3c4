package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/untrusted"
)

func chatReq(user string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Messages:  []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: user}},
		MaxTokens: 100,
	}
}

func TestNewNotConfigured(t *testing.T) {
	t.Parallel()
	_, err := New(Config{APIKey: "k"})
	if !errors.Is(err, ErrNotConfigured) || !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
		t.Errorf("New without base URL: %v", err)
	}
	if _, err := New(Config{BaseURL: "localhost:8080"}); err == nil {
		t.Error("New accepted a base URL without scheme")
	}
	if _, err := New(Config{BaseURL: "http://x/v1", MaxAttempts: -1}); err == nil {
		t.Error("New accepted negative max attempts")
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_API_KEY", "sk-test")
	if got := ConfigFromEnv(); got.BaseURL != DefaultOpenAIBaseURL || got.APIKey != "sk-test" {
		t.Errorf("key only: %+v", got)
	}
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	if got := ConfigFromEnv(); got.BaseURL != "http://127.0.0.1:9/v1" {
		t.Errorf("explicit URL: %+v", got)
	}
}

func TestChatSetsModelAndSendsKey(t *testing.T) {
	t.Parallel()
	var auth string
	srv := llmfake.New(llmfake.Script(llmfake.Text("hello")))
	t.Cleanup(srv.Close)
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		auth = r.Header.Get("Authorization")
		return http.DefaultTransport.RoundTrip(r)
	})}
	c, err := New(Config{BaseURL: srv.URL, APIKey: "sk-abc"}, WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Chat(context.Background(), testMeta, chatReq("hi"))
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if resp.Choices[0].Message.Content != "hello" {
		t.Errorf("content = %q", resp.Choices[0].Message.Content)
	}
	if got := srv.Requests()[0].Model; got != "test-model" {
		t.Errorf("model sent = %q, want Meta.Model", got)
	}
	if auth != "Bearer sk-abc" {
		t.Errorf("Authorization = %q", auth)
	}
	_, err = c.Chat(context.Background(), Meta{Stage: "x"}, chatReq("hi"))
	if !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("missing model: %v", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestChatRetriesServerErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, llmfake.Script(llmfake.Fail(500, "boom"), llmfake.Text("ok")), Config{})
	resp, err := h.client.Chat(context.Background(), testMeta, chatReq("hi"))
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if resp.Choices[0].Message.Content != "ok" {
		t.Errorf("content = %q", resp.Choices[0].Message.Content)
	}
	if got := strings.Join(h.rec.statuses(), ","); got != "http_500,ok" {
		t.Errorf("statuses = %s", got)
	}
	if recs := h.rec.all(); recs[0].Error == "" || !strings.Contains(recs[0].Error, "boom") {
		t.Errorf("failed attempt's error = %q", recs[0].Error)
	}
	if s := h.sleeps.list(); len(s) != 1 || s[0] < 0 || s[0] > DefaultRetryBackoff {
		t.Errorf("pauses = %v, want one fully jittered backoff within [0, %v]", s, DefaultRetryBackoff)
	}
}

func TestChatHonoursRetryAfterOnServerError(t *testing.T) {
	t.Parallel()
	busy := llmfake.Reply{Status: 503, Headers: map[string]string{"Retry-After": "2"}}
	h := newHarness(t, llmfake.Script(busy, llmfake.Text("ok")), Config{})
	if _, err := h.client.Chat(context.Background(), testMeta, chatReq("hi")); err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if s := h.sleeps.list(); len(s) != 1 || s[0] < 2*time.Second || s[0] > 2*time.Second+300*time.Millisecond {
		t.Errorf("pauses = %v, want 2s plus a small jitter", s)
	}
}

func TestChatServerErrorsExhaustAttempts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, llmfake.Static(llmfake.Fail(502, "bad gateway")), Config{MaxAttempts: 2})
	_, err := h.client.Chat(context.Background(), testMeta, chatReq("hi"))
	if err == nil || IsPermanent(err) {
		t.Fatalf("err = %v, want a retryable error", err)
	}
	if _, ok := IsRateLimited(err); ok {
		t.Errorf("502 reported as rate limited")
	}
	if !strings.Contains(err.Error(), "attempt 2 of 2") {
		t.Errorf("error lacks attempt count: %v", err)
	}
	if n := len(h.server.Requests()); n != 2 {
		t.Errorf("requests = %d, want 2", n)
	}
}

func TestChatRateLimited(t *testing.T) {
	t.Parallel()
	date := time.Now().Add(45 * time.Second).UTC().Format(http.TimeFormat)
	cases := []struct {
		name     string
		headers  map[string]string
		want     time.Duration
		tol      time.Duration
		requests int
	}{
		{"retry-after seconds beyond max wait", map[string]string{"Retry-After": "30"}, 30 * time.Second, 0, 1},
		{"retry-after date", map[string]string{"Retry-After": date}, 45 * time.Second, 2 * time.Second, 1},
		{"reset tokens", map[string]string{"x-ratelimit-reset-tokens": "6m0s", "x-ratelimit-reset-requests": "1s"}, 6 * time.Minute, 0, 1},
		{"short reset retried until exhausted", map[string]string{"x-ratelimit-reset-requests": "20ms"}, 20 * time.Millisecond, 0, 3},
		{"no hint", nil, DefaultRateLimitDelay, 0, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lim := &penalties{}
			reply := llmfake.Reply{Status: 429, Content: "slow down", Headers: tc.headers}
			h := newHarness(t, llmfake.Static(reply), Config{}, WithLimiter(lim))
			_, err := h.client.Chat(context.Background(), testMeta, chatReq("hi"))
			d, ok := IsRateLimited(err)
			if !ok {
				t.Fatalf("err = %v, want RateLimitError", err)
			}
			// The provider's wait plus a jitter of at most a tenth and 100ms.
			if d < tc.want-tc.tol || d > tc.want+tc.want/10+100*time.Millisecond+tc.tol {
				t.Errorf("RetryAfter = %v, want %v plus a small jitter (± %v)", d, tc.want, tc.tol)
			}
			if IsPermanent(err) {
				t.Errorf("rate limit reported as permanent")
			}
			if n := len(h.server.Requests()); n != tc.requests {
				t.Errorf("requests = %d, want %d", n, tc.requests)
			}
			statuses := h.rec.statuses()
			if len(statuses) != tc.requests || statuses[0] != StatusRateLimited {
				t.Errorf("statuses = %v", statuses)
			}
			if p := lim.penalties(); len(p) != tc.requests || p[0] <= 0 {
				t.Errorf("limiter penalties = %v, want one positive pause per 429", p)
			}
		})
	}
}

func TestChatPenalizesLimiterWhenQuotaExhausted(t *testing.T) {
	t.Parallel()
	lim := &penalties{}
	reply := llmfake.Reply{Content: "ok", Headers: map[string]string{
		"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1.5s",
		"x-ratelimit-remaining-tokens": "900", "x-ratelimit-reset-tokens": "8s",
	}}
	h := newHarness(t, llmfake.Static(reply), Config{}, WithLimiter(lim))
	if _, err := h.client.Chat(context.Background(), testMeta, chatReq("hi")); err != nil {
		t.Fatal(err)
	}
	if p := lim.penalties(); len(p) != 1 || p[0] != 1500*time.Millisecond {
		t.Errorf("penalties = %v, want [1.5s] (tokens remain)", p)
	}
	if len(lim.waits) != 1 || lim.waits[0] < 100 {
		t.Errorf("limiter waits = %v, want one estimate including max tokens", lim.waits)
	}
}

func TestChatPermanentClientError(t *testing.T) {
	t.Parallel()
	for _, code := range []int{400, 401, 404} {
		h := newHarness(t, llmfake.Static(llmfake.Fail(code, "nope")), Config{})
		_, err := h.client.Chat(context.Background(), testMeta, chatReq("hi"))
		if !IsPermanent(err) {
			t.Errorf("%d: IsPermanent(%v) = false", code, err)
		}
		if n := len(h.server.Requests()); n != 1 {
			t.Errorf("%d: requests = %d, want no retry", code, n)
		}
		if got := h.rec.statuses(); len(got) != 1 || got[0] != HTTPStatus(code) {
			t.Errorf("%d: statuses = %v", code, got)
		}
	}
}

func TestChatMalformedBodyIsRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t, llmfake.Script(llmfake.Reply{Raw: "{not json"}, llmfake.Text("fine")), Config{})
	resp, err := h.client.Chat(context.Background(), testMeta, chatReq("hi"))
	if err != nil || resp.Choices[0].Message.Content != "fine" {
		t.Fatalf("Chat = %+v, %v", resp, err)
	}
	if got := strings.Join(h.rec.statuses(), ","); got != "error,ok" {
		t.Errorf("statuses = %s", got)
	}
}

func TestChatNoChoicesIsInvalidReply(t *testing.T) {
	t.Parallel()
	h := newHarness(t, llmfake.Static(llmfake.Reply{Raw: `{"id":"x","choices":[]}`}), Config{})
	_, err := h.client.Chat(context.Background(), testMeta, chatReq("hi"))
	var inv *InvalidReplyError
	if !errors.As(err, &inv) {
		t.Fatalf("err = %v, want InvalidReplyError", err)
	}
	if got := h.rec.statuses(); len(got) != 1 || got[0] != StatusInvalidReply {
		t.Errorf("statuses = %v", got)
	}
}

func TestChatTimeoutAndCancel(t *testing.T) {
	t.Parallel()
	slow := llmfake.Static(llmfake.Reply{Content: "late", Delay: 10 * time.Second})
	h := newHarness(t, slow, Config{Timeout: 50 * time.Millisecond, MaxAttempts: 2})
	start := time.Now()
	_, err := h.client.Chat(context.Background(), testMeta, chatReq("hi"))
	if err == nil || !strings.Contains(err.Error(), "timed out") || IsPermanent(err) {
		t.Errorf("err = %v, want a retryable timeout", err)
	}
	if got := strings.Join(h.rec.statuses(), ","); got != "error,error" {
		t.Errorf("statuses = %s, want two timed-out attempts", got)
	}

	h2 := newHarness(t, slow, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = h2.client.Chat(ctx, testMeta, chatReq("hi"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if n := len(h2.server.Requests()); n != 1 {
		t.Errorf("cancelled call made %d requests, want 1", n)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("took %v; the delay was not cut short", elapsed)
	}
}

func TestChatBudget(t *testing.T) {
	t.Parallel()
	budget := NewMemoryBudget(0, 150)
	h := newHarness(t, llmfake.Static(llmfake.Reply{Content: "ok", PromptTokens: 20, CompletionTokens: 5}), Config{}, WithBudget(budget))
	if _, err := h.client.Chat(context.Background(), testMeta, chatReq("hi")); err != nil {
		t.Fatalf("first call: %v", err)
	}
	if calls, tokens := budget.Spent("rev-1"); calls != 1 || tokens != 25 {
		t.Errorf("spent = %d calls, %d tokens; want 1, 25", calls, tokens)
	}
	// The estimate (prompt/4 + 100 max tokens) no longer fits in 150 - 25.
	_, err := h.client.Chat(context.Background(), testMeta, chatReq(strings.Repeat("x", 200)))
	if !errors.Is(err, ErrBudgetExceeded) || !IsPermanent(err) {
		t.Fatalf("err = %v, want ErrBudgetExceeded", err)
	}
	if n := len(h.server.Requests()); n != 1 {
		t.Errorf("requests = %d, want the refused call never sent", n)
	}
	if got := strings.Join(h.rec.statuses(), ","); got != "ok,budget_exceeded" {
		t.Errorf("statuses = %s", got)
	}
	// Another review has its own budget.
	other := testMeta
	other.ReviewID = "rev-2"
	if _, err := h.client.Chat(context.Background(), other, chatReq("hi")); err != nil {
		t.Errorf("other review: %v", err)
	}
}

func TestChatBudgetCountsRetries(t *testing.T) {
	t.Parallel()
	budget := NewMemoryBudget(2, 0)
	h := newHarness(t, llmfake.Static(llmfake.Fail(500, "down")), Config{MaxAttempts: 5}, WithBudget(budget))
	_, err := h.client.Chat(context.Background(), testMeta, chatReq("hi"))
	if !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("err = %v, want the budget to stop the retries", err)
	}
	if n := len(h.server.Requests()); n != 2 {
		t.Errorf("requests = %d, want 2", n)
	}
}

func TestChatTracing(t *testing.T) {
	t.Parallel()
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	h := newHarness(t, llmfake.Static(llmfake.Reply{Content: "ok", PromptTokens: 7, CompletionTokens: 3}), Config{},
		WithTracer(tp.Tracer("test")))
	if _, err := h.client.Chat(context.Background(), testMeta, chatReq("hi")); err != nil {
		t.Fatal(err)
	}
	spans := sr.Ended()
	if len(spans) != 1 {
		t.Fatalf("spans = %d, want 1", len(spans))
	}
	attrs := map[string]string{}
	for _, kv := range spans[0].Attributes() {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	want := map[string]string{
		"reviewfleet.stage": "intent", "gen_ai.request.model": "test-model", "gen_ai.operation.name": "chat",
		"gen_ai.usage.input_tokens": "7", "gen_ai.usage.output_tokens": "3", "reviewfleet.llm.attempts": "1",
		"gen_ai.response.finish_reasons": `["stop"]`,
	}
	for k, v := range want {
		if attrs[k] != v {
			t.Errorf("span attribute %s = %q, want %q", k, attrs[k], v)
		}
	}
	if attrs["gen_ai.response.model"] == "" {
		t.Error("span has no gen_ai.response.model")
	}
	if name := spans[0].Name(); name != "chat test-model" {
		t.Errorf("span name = %q, want %q", name, "chat test-model")
	}
	if _, ok := attrs["error.type"]; ok {
		t.Errorf("a successful call has error.type %q", attrs["error.type"])
	}
}

func TestChatTracingError(t *testing.T) {
	t.Parallel()
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	h := newHarness(t, llmfake.Static(llmfake.Fail(400, "bad request")), Config{MaxAttempts: 1}, WithTracer(tp.Tracer("test")))
	if _, err := h.client.Chat(context.Background(), testMeta, chatReq("hi")); err == nil {
		t.Fatal("want an error")
	}
	spans := sr.Ended()
	if len(spans) != 1 {
		t.Fatalf("spans = %d, want 1", len(spans))
	}
	var errType string
	for _, kv := range spans[0].Attributes() {
		if kv.Key == "error.type" {
			errType = kv.Value.AsString()
		}
	}
	if errType != "400" {
		t.Errorf("error.type = %q, want 400", errType)
	}
	if spans[0].Status().Code != codes.Error {
		t.Errorf("status = %v, want Error", spans[0].Status())
	}
}

func TestChatOmitBodies(t *testing.T) {
	t.Parallel()
	h := newHarness(t, llmfake.Static(llmfake.Text("ok")), Config{OmitBodies: true})
	if _, err := h.client.Chat(context.Background(), testMeta, chatReq("hi")); err != nil {
		t.Fatal(err)
	}
	r := h.rec.all()[0]
	if r.Request != nil || r.Response != nil || r.PromptHash == "" {
		t.Errorf("record = %+v, want no bodies but a hash", r)
	}
}

func TestPromptHash(t *testing.T) {
	t.Parallel()
	base := func(schema string) openai.ChatCompletionRequest {
		r := chatReq("review")
		r.Model = "m"
		r.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type:       openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "s", Schema: rawSchema(schema), Strict: true},
		}
		return r
	}
	a, err := PromptHash(base(`{"type":"object","required":["a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := PromptHash(base("{ \"required\": [\"a\"],\n \"type\": \"object\" }"))
	if a != b {
		t.Errorf("hash depends on schema formatting: %s vs %s", a, b)
	}
	withTemp := base(`{"type":"object","required":["a"]}`)
	withTemp.Temperature = 0.7
	if c, _ := PromptHash(withTemp); c != a {
		t.Errorf("hash depends on sampling parameters")
	}
	other := base(`{"type":"object","required":["a"]}`)
	other.Messages[0].Content = "review again"
	if d, _ := PromptHash(other); d == a {
		t.Errorf("different messages hash equally")
	}
	otherSchema, _ := PromptHash(base(`{"type":"object","required":["b"]}`))
	if otherSchema == a {
		t.Errorf("different schemas hash equally")
	}
}

type rawSchema string

func (r rawSchema) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// Two requests that differ only in their random fence ids hash equally;
// a different fenced text does not.
func TestPromptHashIgnoresFenceIDs(t *testing.T) {
	t.Parallel()
	req := func(f untrusted.Fence, text string) openai.ChatCompletionRequest {
		r := chatReq(untrusted.Instructions(f) + "\n" + f.Wrap("diff", text))
		r.Model = "m"
		return r
	}
	a, _ := PromptHash(req(untrusted.New(), "x := 1"))
	b, _ := PromptHash(req(untrusted.New(), "x := 1"))
	c, _ := PromptHash(req(untrusted.New(), "x := 2"))
	if a != b {
		t.Errorf("hash depends on the fence id: %s vs %s", a, b)
	}
	if a == c {
		t.Errorf("different fenced text hashes equally")
	}
}
