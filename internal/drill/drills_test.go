package drill

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// reference runs one review on a clean fleet and returns its rows.
func (f *fleet) reference() rows {
	f.t.Helper()
	ids := f.submit(1)
	if r := f.wait(ids, 3*time.Minute)[ids[0]]; r.Status != review.ReviewDone {
		f.t.Fatalf("reference review: %+v", r)
	}
	return f.rows(ids[0])
}

func reviewTimes(ended map[string]review.Review) []time.Duration {
	var out []time.Duration
	for _, r := range ended {
		if r.FinishedAt != nil {
			out = append(out, r.FinishedAt.Sub(r.CreatedAt))
		}
	}
	return out
}

// Worker processes are SIGKILLed at random moments while DRILL_REVIEWS
// reviews (default 100) run; each killed worker is replaced at once. Every
// review must end, none with more findings, verdicts or expert runs than a
// review without faults.
func TestKillDrill(t *testing.T) {
	drillOnly(t)
	n := envInt("DRILL_REVIEWS", 100)
	f := newFleet(t, llmDelay(200*time.Millisecond, nil), nil)
	f.scheduler()
	workers := []*worker{f.startWorker(), f.startWorker(), f.startWorker()}
	ref := f.reference()

	ids := f.submit(n)
	start := time.Now()
	stop := make(chan struct{})
	kills := make(chan int, 1)
	go func() {
		k := 0
		defer func() { kills <- k }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(300+rand.IntN(1700)) * time.Millisecond):
			}
			i := rand.IntN(len(workers))
			f.kill(workers[i])
			workers[i] = f.startWorker()
			k++
		}
	}()
	ended := f.wait(ids, 15*time.Minute)
	close(stop)
	k := <-kills
	same := f.checkOutcomes(ids, ended, ref)
	times := reviewTimes(ended)
	t.Logf("kill drill: %d reviews, 3 workers, %d SIGKILLs in %s; %d ended, %d exactly like the review without faults; review time p50 %s, p90 %s, max %s",
		n, k, time.Since(start).Round(time.Second), len(ended), same,
		percentile(times, 50).Round(100*time.Millisecond), percentile(times, 90).Round(100*time.Millisecond), percentile(times, 100).Round(100*time.Millisecond))
}

// Redis loses everything while reviews run — FLUSHALL, or a restart
// without persistence — and the reconciler restores every review.
func TestRedisLossDrill(t *testing.T) {
	drillOnly(t)
	n := envInt("DRILL_REVIEWS", 30)
	for _, fault := range []string{"flushall", "restart"} {
		t.Run(fault, func(t *testing.T) {
			f := newFleet(t, llmDelay(300*time.Millisecond, nil), nil)
			f.scheduler()
			f.startWorker()
			f.startWorker()
			ref := f.reference()
			ids := f.submit(n)
			submitted := time.Now()
			// Strike once reviews are spread over the stages: some past
			// intent, most still running.
			ctx := context.Background()
			running, advanced := 0, 0
			for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				running, advanced = 0, 0
				for _, id := range ids {
					if r, err := f.sub.Store.GetReview(ctx, id); err == nil && r.Status == review.ReviewRunning {
						running++
						if r.Stage != "intent" {
							advanced++
						}
					}
				}
				if advanced > 0 && running*3 >= n*2 {
					break
				}
			}
			at := time.Now()
			switch fault {
			case "flushall":
				c := redis.NewClient(&redis.Options{Addr: f.redis.Addr})
				if err := c.FlushAll(ctx).Err(); err != nil {
					t.Fatal(err)
				}
				_ = c.Close()
			case "restart":
				if err := f.redis.Restart(); err != nil {
					t.Fatal(err)
				}
			}
			ended := f.wait(ids, 10*time.Minute)
			last := time.Time{}
			for _, r := range ended {
				if r.FinishedAt != nil && r.FinishedAt.After(last) {
					last = *r.FinishedAt
				}
			}
			same := f.checkOutcomes(ids, ended, ref)
			t.Logf("redis %s %s after submitting %d reviews, %d running (%d past intent): %d ended, %d exactly like the review without faults; the last ended %s after the fault (scheduler interval %s, requeue_after %s)",
				fault, at.Sub(submitted).Round(100*time.Millisecond), n, running, advanced, len(ended), same,
				last.Sub(at).Round(100*time.Millisecond), f.cfg.Scheduler.Interval, f.cfg.Scheduler.RequeueAfter)
			if running == 0 {
				t.Errorf("no review was running when Redis lost its data: the drill proved nothing")
			}
		})
	}
}
