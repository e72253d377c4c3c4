package llm

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

func newMiniredis(t *testing.T) (*miniredis.Miniredis, *redis.Client) {
	t.Helper()
	m := miniredis.RunT(t)
	m.SetTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	return m, rdb
}

func mustReserve(t *testing.T, l *redisLimiter, cost int) time.Duration {
	t.Helper()
	wait, err := l.reserve(context.Background(), cost)
	if err != nil {
		t.Fatalf("reserve: %v", err)
	}
	return wait
}

func TestRedisLimiterPacesWithSmallBurst(t *testing.T) {
	t.Parallel()
	_, rdb := newMiniredis(t)
	l := NewRedisLimiterBurst(rdb, "llm", "e", 60, 0, 2*time.Second).(*redisLimiter) // 1/s
	// The burst is two seconds' worth (plus the first slot), not a minute.
	var waits []time.Duration
	for range 6 {
		waits = append(waits, mustReserve(t, l, 0))
	}
	want := []time.Duration{0, 0, 0, time.Second, 2 * time.Second, 3 * time.Second}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits = %v, want %v", waits, want)
		}
	}
}

func TestRedisLimiterLargeRequestKeepsItsTurn(t *testing.T) {
	t.Parallel()
	m, rdb := newMiniredis(t)
	w1 := newRedisLimiter(rdb, "fleet", 0, 600) // 10 tokens/s, 1s tolerance
	w2 := newRedisLimiter(rdb, "fleet", 0, 600)
	if w := mustReserve(t, w1, 300); w != 0 {
		t.Fatalf("first request waits %v", w)
	}
	// The large request arrives next: it waits for the first one's tokens
	// (30s, less the tolerance), not for a moment when it fits among
	// small requests that keep coming.
	big := mustReserve(t, w2, 500)
	if big != 29*time.Second {
		t.Fatalf("large request waits %v, want 29s", big)
	}
	// Small requests arriving after it queue behind it.
	m.SetTime(time.Date(2025, 1, 1, 0, 0, 1, 0, time.UTC))
	if small := mustReserve(t, w1, 10); small <= big-time.Second {
		t.Errorf("small request after the large one waits %v, want after the large one's slot", small)
	}
}

func TestRedisLimiterRejectsRequestOverQuota(t *testing.T) {
	t.Parallel()
	_, rdb := newMiniredis(t)
	l := NewRedisLimiter(rdb, "big", 0, 1000)
	err := l.Wait(context.Background(), 1001)
	if !errors.Is(err, ErrOverQuota) || !IsPermanent(err) || !strings.Contains(err.Error(), "fleet_tokens_per_minute") {
		t.Errorf("Wait = %v, want a permanent ErrOverQuota naming the setting", err)
	}
}

func TestRedisLimiterCorrectAndRefund(t *testing.T) {
	t.Parallel()
	_, rdb := newMiniredis(t)
	l := newRedisLimiter(rdb, "c", 0, 600)
	l.tolerance = time.Microsecond
	mustReserve(t, l, 100) // TAT 10s ahead
	l.Correct(100, 40)     // only 40 used: TAT 4s ahead
	if w := mustReserve(t, l, 10); w != 4*time.Second-time.Microsecond {
		t.Errorf("after a refund: wait %v, want 4s", w)
	}
	l.Correct(10, 70) // 60 more than estimated: TAT 11s ahead
	if w := mustReserve(t, l, 10); w != 11*time.Second-time.Microsecond {
		t.Errorf("after a charge: wait %v, want 11s", w)
	}
}

func TestRedisLimiterPenalize(t *testing.T) {
	t.Parallel()
	_, rdb := newMiniredis(t)
	l := newRedisLimiter(rdb, "p", 0, 0)
	if w := mustReserve(t, l, 10); w != 0 {
		t.Fatal("unlimited limiter waits")
	}
	l.Penalize(10 * time.Second)
	peer := newRedisLimiter(rdb, "p", 0, 0)
	if w := mustReserve(t, peer, 1); w != 10*time.Second {
		t.Errorf("after penalty: wait %v, want 10s", w)
	}
	l.Penalize(time.Second) // shorter penalties do not shorten the longer one
	if w := mustReserve(t, peer, 1); w != 10*time.Second {
		t.Errorf("shorter penalty changed the wait to %v", w)
	}

	limited := newRedisLimiter(rdb, "q", 60, 0)
	limited.Penalize(5 * time.Second)
	// Calls resume at the quota's pace after the penalty, not in a burst.
	first, second := mustReserve(t, limited, 0), mustReserve(t, limited, 0)
	if first < 5*time.Second || second < first {
		t.Errorf("after penalty: waits %v then %v", first, second)
	}
}

func TestRedisLimiterCoolDownByEndpoint(t *testing.T) {
	t.Parallel()
	_, rdb := newMiniredis(t)
	bad := NewRedisLimiterBurst(rdb, "k", EndpointID("http://x/v1", "old"), 0, 0, 0)
	peer := NewRedisLimiterBurst(rdb, "k", EndpointID("http://x/v1", "old"), 0, 0, 0)
	fixed := NewRedisLimiterBurst(rdb, "k", EndpointID("http://x/v1", "new"), 0, 0, 0)
	bad.(CoolDowner).CoolDown(time.Minute, "HTTP 401: invalid api key")
	err := peer.Wait(context.Background(), 1)
	var cd *CoolDownError
	if !errors.As(err, &cd) || !IsPermanent(err) || !strings.Contains(err.Error(), "invalid api key") {
		t.Errorf("peer Wait = %v, want a permanent cool-down with the provider's message", err)
	}
	if err := fixed.Wait(context.Background(), 1); err != nil {
		t.Errorf("a corrected key is held by the old key's cool-down: %v", err)
	}
}

func TestRedisLimiterWaitHonoursContextAndRefunds(t *testing.T) {
	t.Parallel()
	_, rdb := newMiniredis(t)
	l := newRedisLimiter(rdb, "w", 1, 0)
	l.tolerance = time.Microsecond
	if err := l.Wait(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := l.Wait(ctx, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait = %v, want deadline exceeded", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("Wait ignored the context deadline")
	}
	// The abandoned slot was given back: the next caller waits one
	// interval (a minute), not two.
	if w := mustReserve(t, l, 0); w > time.Minute {
		t.Errorf("next caller waits %v, want at most 1m", w)
	}
}

func TestRedisLimiterWaitReportsRedisErrors(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	l := NewRedisLimiter(rdb, "down", 10, 0)
	m.Close()
	err := l.Wait(context.Background(), 0)
	if err == nil || !strings.Contains(err.Error(), `fleet rate limiter "down"`) {
		t.Errorf("Wait with Redis down = %v", err)
	}
}

// TestRedisLimiterRealRedis runs the shared quota against a real server:
// TEST_REDIS_URL, or redis://127.0.0.1:6379/0. It skips when none answers.
func TestRedisLimiterRealRedis(t *testing.T) {
	t.Parallel()
	url := os.Getenv("TEST_REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("TEST_REDIS_URL: %v", err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Skipf("no Redis at %s: %v", url, err)
	}
	key := "reviewfleet-test-" + uuid.NewString()
	w1 := newRedisLimiter(rdb, key, 3, 0) // one per 20s, 1s tolerance
	w2 := newRedisLimiter(rdb, key, 3, 0)
	t.Cleanup(func() { _ = rdb.Del(context.Background(), w1.keys...).Err() })
	var waits []time.Duration
	for _, l := range []*redisLimiter{w1, w2, w1} {
		waits = append(waits, mustReserve(t, l, 0))
	}
	// Reservations across workers queue one interval apart.
	if waits[0] != 0 || waits[1] < 18*time.Second || waits[1] > 20*time.Second || waits[2] < 38*time.Second {
		t.Errorf("waits across two workers = %v, want 0, ~19s, ~39s", waits)
	}
}

func TestRedisLimiterSurvivesScriptFlush(t *testing.T) {
	t.Parallel()
	_, rdb := newMiniredis(t)
	l := newRedisLimiter(rdb, "flush", 0, 0)
	mustReserve(t, l, 1)
	if err := rdb.ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	// EVALSHA now fails with NOSCRIPT; the script is sent again with EVAL.
	if w := mustReserve(t, l, 1); w != 0 {
		t.Error("waits after the script cache was flushed")
	}
}
