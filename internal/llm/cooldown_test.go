package llm

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

// coolingLimiter records corrections and cool-downs.
type coolingLimiter struct {
	penalties
	mu          sync.Mutex
	corrections [][2]int
	cools       []string
}

func (c *coolingLimiter) Correct(est, used int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corrections = append(c.corrections, [2]int{est, used})
}

func (c *coolingLimiter) CoolDown(d time.Duration, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cools = append(c.cools, d.String()+" "+reason)
}

func TestChatCorrectsLimiterFromUsage(t *testing.T) {
	t.Parallel()
	lim := &coolingLimiter{}
	h := newHarness(t, llmfake.Static(llmfake.Text("ok")), Config{}, WithLimiter(lim))
	resp, err := h.client.Chat(context.Background(), testMeta, chatReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	used := resp.Usage.PromptTokens + resp.Usage.CompletionTokens
	if len(lim.corrections) != 1 || lim.corrections[0][1] != used || lim.corrections[0][0] != lim.waits[0] {
		t.Errorf("corrections = %v, want [estimate %v, used %d]", lim.corrections, lim.waits, used)
	}
	if len(lim.cools) != 0 {
		t.Errorf("cool-down after a success: %v", lim.cools)
	}
}

func TestChatCoolsDownOnPermanentAuthAndQuota(t *testing.T) {
	t.Parallel()
	for _, reply := range []llmfake.Reply{
		llmfake.Fail(401, "invalid api key"),
		{Status: 429, Raw: `{"error":{"message":"billing","type":"insufficient_quota","code":"insufficient_quota"}}`},
	} {
		lim := &coolingLimiter{}
		h := newHarness(t, llmfake.Static(reply), Config{CoolDown: 7 * time.Second}, WithLimiter(lim))
		_, err := h.client.Chat(context.Background(), testMeta, chatReq("hi"))
		if err == nil || !IsPermanent(err) {
			t.Fatalf("reply %d: err = %v, want permanent", reply.Status, err)
		}
		if n := len(h.server.Requests()); n != 1 {
			t.Errorf("reply %d: %d requests, want 1", reply.Status, n)
		}
		if len(lim.cools) != 1 || !strings.HasPrefix(lim.cools[0], "7s HTTP ") {
			t.Errorf("reply %d: cool-downs = %v", reply.Status, lim.cools)
		}
	}
}
