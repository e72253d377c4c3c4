package llm

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

// With no quota configured, the limiter paces nothing until a reply
// states the provider's quota; then every worker of that endpoint and key
// is paced to LearnedShare of it, from Redis, while another key's quota
// stays unlearned.
func TestRedisLimiterLearnsTheProvidersQuota(t *testing.T) {
	t.Parallel()
	_, rdb := newMiniredis(t)
	w1 := NewRedisLimiterBurst(rdb, "llm", "endpoint-a", 0, 0, time.Second).(*redisLimiter)
	w2 := NewRedisLimiterBurst(rdb, "llm", "endpoint-a", 0, 0, time.Second).(*redisLimiter)
	other := NewRedisLimiterBurst(rdb, "llm", "endpoint-b", 0, 0, time.Second).(*redisLimiter)
	for range 20 {
		if w := mustReserve(t, w1, 0); w != 0 {
			t.Fatalf("an unlearned quota waits %v", w)
		}
	}
	h := http.Header{}
	h.Set("x-ratelimit-limit-requests", "60")
	h.Set("x-ratelimit-remaining-requests", "59")
	h.Set("x-ratelimit-reset-requests", "1s")
	w1.Learn(parseProviderLimits(h))
	// 60 a minute paced at 97%: one call per 60/58 s once the second's
	// burst is spent. The second worker, which saw no reply, is paced all
	// the same.
	step := time.Duration(float64(time.Minute) / float64(learnedRate(60)))
	var waits []time.Duration
	for range 5 {
		waits = append(waits, mustReserve(t, w2, 0))
	}
	for i := 2; i < len(waits); i++ {
		if d := waits[i] - waits[i-1]; d < step-time.Millisecond || d > step+time.Millisecond {
			t.Fatalf("waits %v: calls %s apart, want %s", waits, d, step)
		}
	}
	if w := mustReserve(t, other, 0); w != 0 {
		t.Fatalf("another key's quota waits %v after endpoint-a's was learned", w)
	}
}

// A provider saying little remains holds calls back even when the
// limiter's own count had a burst in hand: only what remains may start
// at once.
func TestRedisLimiterFollowsWhatRemains(t *testing.T) {
	t.Parallel()
	_, rdb := newMiniredis(t)
	l := NewRedisLimiterBurst(rdb, "llm", "e", 600, 0, time.Second).(*redisLimiter) // 10/s, burst 10
	l.Learn(ProviderLimits{HasRemainingRequests: true, RemainingRequests: 2})
	var waits []time.Duration
	for range 3 {
		waits = append(waits, mustReserve(t, l, 0))
	}
	if waits[0] != 0 || waits[1] != 0 || waits[2] <= 0 {
		t.Fatalf("waits %v with 2 calls remaining, want two at once and the third paced", waits)
	}
}

// A penalty is the fleet's provider wait too, which submitters read to
// say why nothing moves; a shorter penalty does not shorten it.
func TestPenaltySetsTheProviderWait(t *testing.T) {
	t.Parallel()
	m, rdb := newMiniredis(t)
	l := NewRedisLimiterBurst(rdb, "llm", "e", 0, 0, time.Second)
	if d := ProviderWait(t.Context(), rdb); d != 0 {
		t.Fatalf("provider wait %s before any penalty", d)
	}
	l.Penalize(28 * time.Second)
	l.Penalize(time.Second)
	if d := ProviderWait(t.Context(), rdb); d <= 27*time.Second || d > 28*time.Second {
		t.Fatalf("provider wait %s after a 28s penalty, want 28s", d)
	}
	m.FastForward(29 * time.Second)
	if d := ProviderWait(t.Context(), rdb); d != 0 {
		t.Fatalf("provider wait %s after it passed", d)
	}
}

// A call that must wait for the shared quota beyond the pacing's second
// marks a backlog for as long as its wait; calls within the burst do not.
func TestWaitingForTheQuotaMarksABacklog(t *testing.T) {
	t.Parallel()
	m, rdb := newMiniredis(t)
	l := NewRedisLimiterBurst(rdb, "llm", "e", 60, 0, time.Second).(*redisLimiter) // one call a second
	ctx := t.Context()
	for range 2 {
		if err := l.Wait(ctx, 0); err != nil {
			t.Fatal(err)
		}
	}
	if d := QuotaBacklog(ctx, rdb); d != 0 {
		t.Fatalf("backlog %s after calls within the burst", d)
	}
	// Three more reservations, then a call that would wait about four
	// seconds and gives up at once.
	for range 3 {
		mustReserve(t, l, 0)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := l.Wait(wctx, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait: %v, want it to give up", err)
	}
	if d := QuotaBacklog(ctx, rdb); d < 3*time.Second || d > 5*time.Second {
		t.Fatalf("backlog %s after a call had to wait about 4s", d)
	}
	m.FastForward(5 * time.Second)
	if d := QuotaBacklog(ctx, rdb); d != 0 {
		t.Fatalf("backlog %s after the wait passed", d)
	}
}

func TestParseProviderLimits(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	h.Set("x-ratelimit-limit-requests", "600")
	h.Set("x-ratelimit-limit-tokens", "150000")
	h.Set("x-ratelimit-remaining-requests", "0")
	h.Set("x-ratelimit-remaining-tokens", "garbage")
	h.Set("x-ratelimit-reset-requests", "6m0s")
	h.Set("x-ratelimit-reset-tokens", "20ms")
	p := parseProviderLimits(h)
	want := ProviderLimits{RequestsPerMinute: 600, TokensPerMinute: 150000, HasRemainingRequests: true,
		ResetRequests: 6 * time.Minute, ResetTokens: 20 * time.Millisecond}
	if p != want {
		t.Fatalf("parsed %+v, want %+v", p, want)
	}
	if (ProviderLimits{}).Known() || parseProviderLimits(nil).Known() {
		t.Fatal("no headers count as known limits")
	}
}

// learningLimiter records the limits a client passes on.
type learningLimiter struct {
	penalties
	learned []ProviderLimits
}

func (l *learningLimiter) Learn(p ProviderLimits) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.learned = append(l.learned, p)
}

// Every reply's rate-limit headers reach the limiter, a success's as well
// as a 429's, whose wait is also its penalty.
func TestChatPassesTheProvidersLimitsOn(t *testing.T) {
	t.Parallel()
	lim := &learningLimiter{}
	var n int
	h := newHarness(t, func(context.Context, openai.ChatCompletionRequest) llmfake.Reply {
		n++
		r := llmfake.Text("ok")
		if n == 1 {
			r = llmfake.RateLimited(2 * time.Second)
		}
		r.Headers = map[string]string{"x-ratelimit-limit-requests": "600", "x-ratelimit-remaining-requests": strconv.Itoa(n - 1),
			"x-ratelimit-reset-requests": "100ms", "Retry-After": r.Headers["Retry-After"]}
		return r
	}, Config{MaxRetryWait: time.Minute}, WithLimiter(lim))
	if _, err := h.client.Chat(context.Background(), testMeta, chatReq("hi")); err != nil {
		t.Fatal(err)
	}
	lim.mu.Lock()
	defer lim.mu.Unlock()
	if len(lim.learned) != 2 || lim.learned[0].RequestsPerMinute != 600 || lim.learned[1].RemainingRequests != 1 {
		t.Fatalf("learned %+v, want the 429's and the success's limits", lim.learned)
	}
	if len(lim.ds) == 0 || lim.ds[0] != 2*time.Second {
		t.Fatalf("penalties %v, want the 429's 2s first", lim.ds)
	}
}
