package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

func TestRunTimeout(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	llm := newFakeLLM(t, llmfake.Script(
		llmfake.Tools(llmfake.ToolCall("list_dir", map[string]any{})),
		llmfake.Reply{Delay: 10 * time.Second},
	))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, llm.model(), sampleTask(root), fastConfig())
	if err != nil {
		t.Fatalf("Run returned an error for a deadline: %v", err)
	}
	if res.StopReason != StopTimeout || res.Rounds != 2 {
		t.Fatalf("stop %s after %d rounds, want timeout in round 2", res.StopReason, res.Rounds)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Run took %s after a 300ms deadline", d)
	}
	if res.Verdict != review.VerdictInconclusive || res.Err != nil || res.Error != "" {
		t.Errorf("verdict = %s, Err %v, Error %q; want inconclusive without an error", res.Verdict, res.Err, res.Error)
	}
}

func TestRunCancelledReturnsError(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	llm := newFakeLLM(t, indexed(func(n int) llmfake.Reply {
		cancel()
		return llmfake.Reply{Delay: 10 * time.Second}
	}))
	res, err := Run(ctx, llm.model(), sampleTask(root), fastConfig())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want context.Canceled", err)
	}
	if res.StopReason != StopError || !errors.Is(res.Err, context.Canceled) {
		t.Errorf("stop %s Err %v, want error with context.Canceled", res.StopReason, res.Err)
	}
}

func TestRunModelError(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	llm := newFakeLLM(t, llmfake.Script(llmfake.Fail(http.StatusBadRequest, "scripted failure 400")))
	res, err := Run(context.Background(), llm.model(), sampleTask(root), fastConfig())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.StopReason != StopError || !strings.Contains(res.Error, "scripted failure 400") {
		t.Fatalf("stop %s error %q, want error naming the failure", res.StopReason, res.Error)
	}
	var apiErr *openai.APIError
	if !errors.As(res.Err, &apiErr) || apiErr.HTTPStatusCode != http.StatusBadRequest || res.Err.Error() != res.Error {
		t.Errorf("Err = %v, want the model's 400 behind Error", res.Err)
	}
}

func TestRunRetryableErrorIsReturned(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	llm := newFakeLLM(t, llmfake.Script(llmfake.Tools(llmfake.ToolCall("list_dir", map[string]any{})), llmfake.Fail(http.StatusTooManyRequests, "slow down")))
	cfg := fastConfig()
	cfg.IsRetryable = func(err error) bool {
		var apiErr *openai.APIError
		return errors.As(err, &apiErr) && apiErr.HTTPStatusCode == http.StatusTooManyRequests
	}
	res, err := Run(context.Background(), llm.model(), sampleTask(root), cfg)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusTooManyRequests {
		t.Fatalf("Run error = %v, want the 429", err)
	}
	if res.Rounds != 2 || res.ToolCalls["list_dir"] != 1 {
		t.Errorf("partial result: rounds %d tool calls %v", res.Rounds, res.ToolCalls)
	}
	if !errors.As(res.Err, &apiErr) || apiErr.HTTPStatusCode != http.StatusTooManyRequests {
		t.Errorf("Result.Err = %v, want the 429", res.Err)
	}
}

func TestRunBadSetupEndsInErrorResult(t *testing.T) {
	t.Parallel()
	llm := newFakeLLM(t, llmfake.Script())
	task := sampleTask(t.TempDir() + "/missing")
	res, err := Run(context.Background(), llm.model(), task, fastConfig())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.StopReason != StopError || !strings.Contains(res.Error, "snapshot") {
		t.Fatalf("stop %s error %q, want a setup error", res.StopReason, res.Error)
	}
	if len(llm.requests()) != 0 {
		t.Errorf("the model was called despite the bad setup")
	}
}

// Every way a run can end gives non-nil ToolCalls and Phases, and an Err
// exactly when it stops with StopError.
func TestRunResultCollectionsNeverNil(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	tests := []struct {
		name   string
		model  func(t *testing.T) ChatModel
		task   Task
		stop   StopReason
		errIs  error
		phases int
	}{
		{"no model", func(*testing.T) ChatModel { return nil }, sampleTask(root), StopError, errNoModel, 0},
		{"bad root", func(t *testing.T) ChatModel { return newFakeLLM(t, llmfake.Script()).model() },
			sampleTask(t.TempDir() + "/missing"), StopError, nil, 0},
		{"model error", func(t *testing.T) ChatModel {
			return newFakeLLM(t, llmfake.Script(llmfake.Fail(http.StatusInternalServerError, "down"))).model()
		}, sampleTask(root), StopError, nil, 0},
		{"missing completion", func(t *testing.T) ChatModel {
			return newFakeLLM(t, llmfake.Script(llmfake.Text("hm"), llmfake.Text("hm"), llmfake.Text("hm"))).model()
		}, sampleTask(root), StopMissingCompletion, nil, 0},
		{"accepted at once", func(t *testing.T) ChatModel {
			return newFakeLLM(t, llmfake.Script(llmfake.Tools(llmfake.ToolCall("submit_verdict",
				map[string]any{"verdict": "refuted", "confidence": 0.1, "reasoning": "guarded", "evidence": []map[string]any{{"kind": "content_contains", "path": "internal/auth/session.go", "start_line": 10, "end_line": 10, "match": "sess := s.byID[id]", "required": true}}})))).model()
		}, sampleTask(root), StopAccepted, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := Run(context.Background(), tt.model(t), tt.task, fastConfig())
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.StopReason != tt.stop {
				t.Fatalf("stop %s, want %s", res.StopReason, tt.stop)
			}
			if res.ToolCalls == nil || res.Phases == nil || len(res.Phases) != tt.phases {
				t.Errorf("ToolCalls %#v Phases %#v, want non-nil with %d phase changes", res.ToolCalls, res.Phases, tt.phases)
			}
			if (res.Err != nil) != (tt.stop == StopError) || (tt.errIs != nil && !errors.Is(res.Err, tt.errIs)) {
				t.Errorf("Err = %v for stop %s", res.Err, res.StopReason)
			}
			data, err := json.Marshal(res)
			if err != nil {
				t.Fatalf("encode result: %v", err)
			}
			if s := string(data); strings.Contains(s, `"Err"`) || !strings.Contains(s, `"Phases":[]`) {
				t.Errorf("encoded result %s, want no Err and an empty Phases list", s)
			}
		})
	}
}
