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

func mustTry(t *testing.T, l *redisLimiter, cost int) (bool, time.Duration) {
	t.Helper()
	ok, wait, err := l.try(context.Background(), cost)
	if err != nil {
		t.Fatalf("try: %v", err)
	}
	return ok, wait
}

func TestRedisLimiterRequests(t *testing.T) {
	t.Parallel()
	m, rdb := newMiniredis(t)
	l := newRedisLimiter(rdb, "llm", 2, 0)
	for i := range 2 {
		if ok, _ := mustTry(t, l, 0); !ok {
			t.Fatalf("burst request %d refused", i)
		}
	}
	ok, wait := mustTry(t, l, 0)
	if ok || wait != 30*time.Second {
		t.Fatalf("third request: ok=%v wait=%v, want refused for 30s", ok, wait)
	}
	m.SetTime(time.Date(2025, 1, 1, 0, 0, 29, 0, time.UTC))
	if ok, wait := mustTry(t, l, 0); ok || wait != time.Second {
		t.Errorf("at 29s: ok=%v wait=%v, want refused for 1s", ok, wait)
	}
	m.SetTime(time.Date(2025, 1, 1, 0, 0, 30, 0, time.UTC))
	if ok, _ := mustTry(t, l, 0); !ok {
		t.Errorf("at 30s: refused")
	}
}

func TestRedisLimiterTokensShared(t *testing.T) {
	t.Parallel()
	_, rdb := newMiniredis(t)
	w1 := newRedisLimiter(rdb, "fleet", 0, 100)
	w2 := newRedisLimiter(rdb, "fleet", 0, 100)
	other := newRedisLimiter(rdb, "other", 0, 100)
	if ok, _ := mustTry(t, w1, 60); !ok {
		t.Fatal("first worker refused")
	}
	// The second worker sees the first one's spend: 20 tokens short at
	// 100/min is 12s.
	if ok, wait := mustTry(t, w2, 60); ok || wait != 12*time.Second {
		t.Errorf("second worker: ok=%v wait=%v, want refused for 12s", ok, wait)
	}
	if ok, _ := mustTry(t, w2, 40); !ok {
		t.Errorf("second worker refused although 40 tokens remain")
	}
	if ok, _ := mustTry(t, other, 60); !ok {
		t.Errorf("a different key shares the quota")
	}
}

func TestRedisLimiterPenalize(t *testing.T) {
	t.Parallel()
	_, rdb := newMiniredis(t)
	l := newRedisLimiter(rdb, "p", 0, 0)
	if ok, _ := mustTry(t, l, 10); !ok {
		t.Fatal("unlimited limiter refused")
	}
	l.Penalize(10 * time.Second)
	peer := newRedisLimiter(rdb, "p", 0, 0)
	if ok, wait := mustTry(t, peer, 1); ok || wait != 10*time.Second {
		t.Errorf("after penalty: ok=%v wait=%v, want refused for 10s", ok, wait)
	}
	l.Penalize(time.Second) // shorter penalties do not shorten the longer one
	if _, wait := mustTry(t, peer, 1); wait != 10*time.Second {
		t.Errorf("shorter penalty changed the wait to %v", wait)
	}

	limited := newRedisLimiter(rdb, "q", 60, 0)
	limited.Penalize(5 * time.Second)
	// The quota is emptied too: the next slot is one interval (1s) after
	// the penalty ends at the earliest, and never before the penalty.
	if ok, wait := mustTry(t, limited, 0); ok || wait < 5*time.Second {
		t.Errorf("limited after penalty: ok=%v wait=%v", ok, wait)
	}
}

func TestRedisLimiterWaitHonoursContext(t *testing.T) {
	t.Parallel()
	_, rdb := newMiniredis(t)
	l := NewRedisLimiter(rdb, "w", 1, 0)
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
	w1 := newRedisLimiter(rdb, key, 3, 0)
	w2 := newRedisLimiter(rdb, key, 3, 0)
	t.Cleanup(func() { _ = rdb.Del(context.Background(), w1.keys...).Err() })
	admitted := 0
	for _, l := range []*redisLimiter{w1, w2, w1, w2} {
		if ok, _ := mustTry(t, l, 0); ok {
			admitted++
		}
	}
	if admitted != 3 {
		t.Errorf("admitted %d of 4 across two workers, want the shared 3", admitted)
	}
	if _, wait := mustTry(t, w2, 0); wait <= 0 || wait > 20*time.Second {
		t.Errorf("wait = %v, want within one 20s interval", wait)
	}
}

func TestRedisLimiterSurvivesScriptFlush(t *testing.T) {
	t.Parallel()
	_, rdb := newMiniredis(t)
	l := newRedisLimiter(rdb, "flush", 0, 0)
	if ok, _ := mustTry(t, l, 1); !ok {
		t.Fatal("refused")
	}
	if err := rdb.ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	// EVALSHA now fails with NOSCRIPT; the script is sent again with EVAL.
	if ok, _ := mustTry(t, l, 1); !ok {
		t.Error("refused after the script cache was flushed")
	}
}
