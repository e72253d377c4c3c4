package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/progress"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// BenchmarkStageHops runs one worker at the default task check and idle
// poll intervals against a redis-server of its own and a model that answers at
// once, and measures:
//   - the Redis commands per second the idle worker sends (INFO stats over
//     REVIEWFLEET_BENCH_IDLE_SECONDS, default 10);
//   - for REVIEWFLEET_BENCH_HOP_REVIEWS sequential reviews of the sample
//     change (default 10; 18 calls each), the hop from a task handed to the
//     queue to its handler starting (stage_items.queued_at → started_at),
//     p50 and p95;
//   - the fleet's overhead per LLM call: the items' handler time less the
//     calls' own latency, per call, and the reviews per minute.
//
// It needs redis-server on PATH (port REVIEWFLEET_BENCH_REDIS_PORT,
// default 6391) and TEST_DATABASE_URL.
func BenchmarkStageHops(b *testing.B) {
	port := envInt("REVIEWFLEET_BENCH_REDIS_PORT", 6391)
	idle := time.Duration(envInt("REVIEWFLEET_BENCH_IDLE_SECONDS", 10)) * time.Second
	n := envInt("REVIEWFLEET_BENCH_HOP_REVIEWS", 10)
	addr := startRedis(b, port)
	progress.PollInterval = 5 * time.Millisecond // benchmarks run after the tests: no race
	f := newFleet(b, demo.Handler, func(c *config.Config) {
		c.RedisURL = "redis://" + addr + "/0"
		c.Worker.TaskCheckInterval = config.Default().Worker.TaskCheckInterval
	})
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		time.Sleep(2 * time.Second) // let the worker settle
		if os.Getenv("REVIEWFLEET_BENCH_COMMANDSTATS") != "" {
			_ = rdb.ConfigResetStat(ctx).Err()
		}
		before := commandsProcessed(b, rdb)
		time.Sleep(idle)
		idleRate := float64(commandsProcessed(b, rdb)-before-1) / idle.Seconds()
		if os.Getenv("REVIEWFLEET_BENCH_COMMANDSTATS") != "" {
			// Which commands the idle worker sends, to see what to cut.
			stats, _ := rdb.Info(ctx, "commandstats").Result()
			fmt.Fprintf(os.Stderr, "idle commandstats over %s:\n%s\n", idle, stats)
		}

		req := demoRepo(b)
		var hops []time.Duration
		var busy, model time.Duration
		calls := 0
		start := time.Now()
		for range n {
			id, err := f.sub.Submit(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			r, err := progress.Wait(ctx, f.sub.Store, id, io.Discard, time.Minute)
			if err != nil || r.Status != review.ReviewDone {
				b.Fatalf("%s %v", r.Status, err)
			}
			ts, err := f.sub.Store.ItemTimings(ctx, id)
			if err != nil {
				b.Fatal(err)
			}
			for _, t := range ts {
				if !t.Queued.IsZero() && !t.Started.IsZero() {
					hops = append(hops, t.Started.Sub(t.Queued))
				}
				if !t.Started.IsZero() && !t.Finished.IsZero() {
					busy += t.Finished.Sub(t.Started)
				}
			}
			cs, err := f.sub.Store.ListLLMCalls(ctx, id)
			if err != nil {
				b.Fatal(err)
			}
			for _, c := range cs {
				model += c.Latency
			}
			calls += len(cs)
		}
		wall := time.Since(start)
		slices.Sort(hops)
		perCall := (busy - model) / time.Duration(max(calls, 1))
		b.ReportMetric(idleRate, "idle-redis-cmd/s")
		b.ReportMetric(float64(pct(hops, 50).Microseconds())/1000, "hop-p50-ms")
		b.ReportMetric(float64(pct(hops, 95).Microseconds())/1000, "hop-p95-ms")
		b.ReportMetric(float64(perCall.Microseconds())/1000, "overhead-ms/call")
		b.ReportMetric(float64(n)/wall.Minutes(), "reviews/min")
		fmt.Fprintf(os.Stderr, "stage hops: idle %.0f Redis cmd/s; %d hops p50 %s p95 %s; %d calls, overhead %s per call; %d reviews in %s\n",
			idleRate, len(hops), pct(hops, 50).Round(time.Microsecond*100), pct(hops, 95).Round(time.Microsecond*100),
			calls, perCall.Round(time.Microsecond*100), n, wall.Round(time.Millisecond))
	}
}

// startRedis runs a redis-server of the benchmark's own, without
// persistence, until the benchmark ends.
func startRedis(b *testing.B, port int) string {
	b.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		b.Skip("redis-server not on PATH")
	}
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			b.Fatalf("redis-server on %s did not start: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// commandsProcessed reads total_commands_processed (the INFO call itself
// counts as one).
func commandsProcessed(b *testing.B, rdb *redis.Client) int64 {
	b.Helper()
	info, err := rdb.Info(context.Background(), "stats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("INFO stats has no total_commands_processed")
	return 0
}
