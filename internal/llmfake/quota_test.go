package llmfake

import (
	"context"
	"net/http"
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
