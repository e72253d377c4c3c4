package llm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

// Environment of a worker process started by BenchmarkFleetQuota.
const (
	envQuotaWorker = "REVIEWFLEET_QUOTA_WORKER" // "1" in a worker process
	envQuotaURL    = "REVIEWFLEET_QUOTA_URL"
	envQuotaRedis  = "REVIEWFLEET_QUOTA_REDIS"
	envQuotaKey    = "REVIEWFLEET_QUOTA_KEY"
	envQuotaRPM    = "REVIEWFLEET_QUOTA_RPM"
	envQuotaBurst  = "REVIEWFLEET_QUOTA_BURST"
	envQuotaFor    = "REVIEWFLEET_QUOTA_FOR"
)

func benchEnvInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// BenchmarkFleetQuota starts 1, 2 and 4 worker processes sharing one
// fleet quota in Redis against a fake provider that enforces the same
// quota over a sliding minute, answering 429 beyond it, with 200 ms per
// call. Each process runs 8 callers in a loop through the real client
// (limiters, retries, Retry-After). It reports, per worker count and per
// burst tolerance (the default 1s, and 60s as the limiter had before),
// the share of the quota used and the share of calls answered 429, as the
// median and range over the runs.
//
// Size: REVIEWFLEET_BENCH_QUOTA_RPM (default 600), _SECONDS (run length,
// default 90: longer than the provider's window), _RUNS (default 3). The
// runs go side by side; Redis is TEST_REDIS_URL or 127.0.0.1:6379 (keys
// are unique to the run, nothing is flushed).
func BenchmarkFleetQuota(b *testing.B) {
	rpm := benchEnvInt("REVIEWFLEET_BENCH_QUOTA_RPM", 600)
	secs := benchEnvInt("REVIEWFLEET_BENCH_QUOTA_SECONDS", 90)
	runs := benchEnvInt("REVIEWFLEET_BENCH_QUOTA_RUNS", 3)
	redisURL := os.Getenv("TEST_REDIS_URL")
	if redisURL == "" {
		redisURL = "redis://127.0.0.1:6379/0"
	}
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		b.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		b.Skipf("no Redis at %s: %v", redisURL, err)
	}
	type cfg struct {
		workers int
		burst   time.Duration
	}
	var cfgs []cfg
	for _, burst := range []time.Duration{DefaultFleetBurst, time.Minute} {
		for _, w := range []int{1, 2, 4} {
			cfgs = append(cfgs, cfg{w, burst})
		}
	}
	type result struct{ used, denied float64 }
	for i := 0; i < b.N; i++ {
		results := make([][]result, len(cfgs))
		var mu sync.Mutex
		var wg sync.WaitGroup
		for ci, c := range cfgs {
			for range runs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					used, denied := runQuota(b, redisURL, rpm, c.workers, c.burst, time.Duration(secs)*time.Second)
					mu.Lock()
					results[ci] = append(results[ci], result{used, denied})
					mu.Unlock()
				}()
			}
		}
		wg.Wait()
		b.Logf("quota %d rpm, %d s per run, %d runs side by side", rpm, secs, runs)
		for ci, c := range cfgs {
			var used, denied []float64
			for _, r := range results[ci] {
				used, denied = append(used, r.used), append(denied, r.denied)
			}
			b.Logf("burst %-4s workers %d: quota used %s, 429 share %s", c.burst, c.workers, spread(used), spread(denied))
			if c.burst == DefaultFleetBurst {
				b.ReportMetric(median(used), fmt.Sprintf("used-%%-%dw", c.workers))
				b.ReportMetric(median(denied), fmt.Sprintf("429-%%-%dw", c.workers))
			}
		}
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func spread(xs []float64) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	return fmt.Sprintf("%.1f%% (%.1f–%.1f)", median(s), s[0], s[len(s)-1])
}

// runQuota runs one measurement and returns the percentage of the quota
// used and the percentage of calls answered 429.
func runQuota(b *testing.B, redisURL string, rpm, workers int, burst, d time.Duration) (used, denied float64) {
	h, st := llmfake.Quota(rpm, time.Minute, func(ctx context.Context, _ openai.ChatCompletionRequest) llmfake.Reply {
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
		}
		return llmfake.Text("ok")
	})
	srv := llmfake.New(h)
	defer srv.Close()
	key := "reviewfleet-bench-" + uuid.NewString()
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestQuotaWorkerProcess$")
			cmd.Env = append(os.Environ(), envQuotaWorker+"=1", envQuotaURL+"="+srv.URL, envQuotaRedis+"="+redisURL,
				envQuotaKey+"="+key, envQuotaRPM+"="+strconv.Itoa(rpm), envQuotaBurst+"="+burst.String(),
				envQuotaFor+"="+d.String())
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Errorf("worker process: %v\n%s", err, out)
			}
		}()
	}
	wg.Wait()
	accepted := st.AcceptedBetween(start, start.Add(d))
	_, deniedN := st.Counts()
	all, _ := st.Counts()
	all += deniedN
	used = 100 * float64(accepted) / (float64(rpm) * d.Minutes())
	if all > 0 {
		denied = 100 * float64(deniedN) / float64(all)
	}
	return used, denied
}

// TestQuotaWorkerProcess is one worker process of BenchmarkFleetQuota; it
// does nothing in a normal test run.
func TestQuotaWorkerProcess(t *testing.T) {
	if os.Getenv(envQuotaWorker) != "1" {
		t.Skip("a worker process of BenchmarkFleetQuota")
	}
	opts, err := redis.ParseURL(os.Getenv(envQuotaRedis))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	rpm, _ := strconv.Atoi(os.Getenv(envQuotaRPM))
	burst, _ := time.ParseDuration(os.Getenv(envQuotaBurst))
	d, _ := time.ParseDuration(os.Getenv(envQuotaFor))
	lim := NewRedisLimiterBurst(rdb, os.Getenv(envQuotaKey), "bench", rpm, 0, burst)
	c, err := New(Config{BaseURL: os.Getenv(envQuotaURL), APIKey: "bench", OmitBodies: true}, WithLimiter(lim))
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_, err := c.Chat(ctx, Meta{Stage: "bench", Model: "fake-model"}, openai.ChatCompletionRequest{
					Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}})
				if _, limited := IsRateLimited(err); limited && ctx.Err() == nil {
					// As the task queue would: come back after the wait.
					time.Sleep(time.Second)
				} else if err != nil && ctx.Err() == nil && !strings.Contains(err.Error(), "context") {
					t.Logf("call: %v", err)
				}
			}
		}()
	}
	wg.Wait()
}
