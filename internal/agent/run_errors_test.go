package agent

import (
	"context"
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
	if res.Verdict != review.VerdictInconclusive {
		t.Errorf("verdict = %s, want inconclusive", res.Verdict)
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
	_, err := Run(ctx, llm.model(), sampleTask(root), fastConfig())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want context.Canceled", err)
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
