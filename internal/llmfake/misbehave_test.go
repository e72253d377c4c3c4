package llmfake

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func TestParseShares(t *testing.T) {
	t.Parallel()
	got, err := ParseShares("429=0.25,slow=0.5")
	if err != nil || got["429"] != 0.25 || got["slow"] != 0.5 || len(got) != 2 {
		t.Fatalf("ParseShares = %v, %v", got, err)
	}
	if got, err := ParseShares(" "); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v, %v", got, err)
	}
	for _, bad := range []string{"x=0.1", "500", "500=-0.1", "500=2", "500=0.7,401=0.7", "500=0.1,500=0.1", "500=abc"} {
		if _, err := ParseShares(bad); err == nil {
			t.Errorf("ParseShares(%q) accepted", bad)
		}
	}
}

func TestMisbehaveSharesAreSeeded(t *testing.T) {
	t.Parallel()
	count := func(seed uint64) map[string]int {
		seen := map[string]int{}
		h := Misbehave(Static(Text("{}")), MisbehaveOptions{
			Shares: map[string]float64{"500": 0.2, "401": 0.1}, Seed: seed,
			Chosen: func(_ openai.ChatCompletionRequest, kind string) { seen[kind]++ },
		})
		for range 2000 {
			h(context.Background(), openai.ChatCompletionRequest{})
		}
		return seen
	}
	a, b := count(3), count(3)
	for k := range a {
		if a[k] != b[k] {
			t.Fatalf("the same seed gave %v and %v", a, b)
		}
	}
	// 2000 draws: 400 and 200 expected; these bounds are many deviations wide.
	if a["500"] < 300 || a["500"] > 500 || a["401"] < 120 || a["401"] > 280 || a[""] < 1200 {
		t.Errorf("shares %v, want about 400 500s, 200 401s and 1400 normal replies", a)
	}
}

// TestMisbehavioursThroughTheClient sends a request per misbehaviour
// through the go-openai client and checks what the client sees.
func TestMisbehavioursThroughTheClient(t *testing.T) {
	t.Parallel()
	normal := Static(JSON(map[string]any{"findings": []any{}}))
	want := map[string]func(t *testing.T, resp openai.ChatCompletionResponse, err error){
		Misbehave429:     apiStatus(http.StatusTooManyRequests, ""),
		MisbehaveQuota:   apiStatus(http.StatusTooManyRequests, "insufficient_quota"),
		Misbehave401:     apiStatus(http.StatusUnauthorized, "invalid_api_key"),
		Misbehave403:     apiStatus(http.StatusForbidden, "model_not_allowed"),
		Misbehave500:     apiStatus(http.StatusInternalServerError, ""),
		MisbehaveContext: apiStatus(http.StatusBadRequest, "context_length_exceeded"),
		MisbehaveGarbage: func(t *testing.T, _ openai.ChatCompletionResponse, err error) {
			if err == nil {
				t.Error("garbage body decoded without error")
			}
		},
		MisbehaveTruncated: func(t *testing.T, resp openai.ChatCompletionResponse, err error) {
			if err != nil {
				t.Fatal(err)
			}
			c := resp.Choices[0]
			if c.FinishReason != openai.FinishReasonLength || c.Message.Content != `{"findi` {
				t.Errorf("truncated reply %q (finish %s)", c.Message.Content, c.FinishReason)
			}
		},
		MisbehaveSlow: func(t *testing.T, resp openai.ChatCompletionResponse, err error) {
			if err != nil || !strings.Contains(resp.Choices[0].Message.Content, "findings") {
				t.Errorf("slow reply %+v, %v", resp, err)
			}
		},
	}
	if len(want) != len(Misbehaviours) {
		t.Fatalf("%d checks for %d misbehaviours", len(want), len(Misbehaviours))
	}
	for _, kind := range Misbehaviours {
		srv := New(Misbehave(normal, MisbehaveOptions{Always: kind, Slow: 10 * time.Millisecond}))
		cfg := openai.DefaultConfig("test")
		cfg.BaseURL = srv.URL
		resp, err := openai.NewClientWithConfig(cfg).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
			Model: "fake-model", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}},
		})
		srv.Close()
		t.Run(kind, func(t *testing.T) { want[kind](t, resp, err) })
	}
}

func apiStatus(status int, code string) func(t *testing.T, _ openai.ChatCompletionResponse, err error) {
	return func(t *testing.T, _ openai.ChatCompletionResponse, err error) {
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) {
			t.Fatalf("error %v (%T), want an *openai.APIError", err, err)
		}
		if apiErr.HTTPStatusCode != status || (code != "" && apiErr.Code != code) {
			t.Errorf("status %d code %v, want %d %q", apiErr.HTTPStatusCode, apiErr.Code, status, code)
		}
	}
}

func TestMarkerFindings(t *testing.T) {
	t.Parallel()
	prompt := "### File: x/a b.go (modified, +2 -1)\n```\n@@ new lines 3-5 @@\n   3   ctx\n     - old // BUG: gone\n   4 + n := 1 // BUG: one\n   5 + m := 2\n```\n### File: y.go (added, +1 -0)\n```\n  10 + BUG: here\n```\n"
	got := markerFindings(prompt, DefaultMarker)
	if len(got) != 2 || got[0]["file"] != "x/a b.go" || got[0]["line_start"] != 4 || got[1]["file"] != "y.go" || got[1]["line_start"] != 10 {
		t.Fatalf("findings %v", got)
	}
	m := markerFinding.FindStringSubmatch("finding: " + got[0]["description"].(string))
	if m == nil || m[1] != "x/a b.go" || m[2] != "4" {
		t.Fatalf("description %q does not give the location back: %v", got[0]["description"], m)
	}
}
