package llmfake

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func TestQuotaSlidingWindow(t *testing.T) {
	t.Parallel()
	h, st := Quota(2, time.Hour, func(context.Context, openai.ChatCompletionRequest) Reply { return Text("ok") })
	for i := range 3 {
		r := h(context.Background(), openai.ChatCompletionRequest{})
		if want := i == 2; (r.Status == http.StatusTooManyRequests) != want {
			t.Fatalf("call %d: status %d", i, r.Status)
		}
		if i == 2 && (r.Headers["Retry-After"] == "" || r.Headers["x-ratelimit-reset-requests"] == "") {
			t.Errorf("429 without a reset hint: %v", r.Headers)
		}
	}
	if a, d := st.Counts(); a != 2 || d != 1 {
		t.Errorf("counts = %d accepted, %d denied", a, d)
	}
}

// Every accepted reply states the quota, what is left of it after the
// call and when a place frees, as a provider's headers do.
func TestQuotaStatesItselfOnEveryReply(t *testing.T) {
	t.Parallel()
	h, _ := Quota(3, time.Hour, func(context.Context, openai.ChatCompletionRequest) Reply { return Text("ok") })
	for i := range 3 {
		r := h(context.Background(), openai.ChatCompletionRequest{})
		if r.Status != 0 && r.Status != http.StatusOK {
			t.Fatalf("call %d: status %d", i, r.Status)
		}
		if got := r.Headers["x-ratelimit-limit-requests"]; got != "3" {
			t.Errorf("call %d: limit header %q, want 3", i, got)
		}
		if got, want := r.Headers["x-ratelimit-remaining-requests"], strconv.Itoa(2-i); got != want {
			t.Errorf("call %d: remaining header %q, want %s", i, got, want)
		}
		reset, err := time.ParseDuration(r.Headers["x-ratelimit-reset-requests"])
		if err != nil || reset <= 59*time.Minute || reset > time.Hour {
			t.Errorf("call %d: reset header %q (%v), want just under the hour window", i, r.Headers["x-ratelimit-reset-requests"], err)
		}
	}
}
