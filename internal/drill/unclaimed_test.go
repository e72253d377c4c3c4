package drill

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/heartbeat"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// thiefEnv names the Redis URL a re-executed test binary serves the
// queues from as a worker that takes tasks and never claims them.
const thiefEnv = "REVIEWFLEET_DRILL_THIEF_REDIS"

// TestThief is not a test: run by TestTakenButUnclaimedTasksRunAgain as a
// process of its own, it takes tasks off the queues like a worker, says so
// on stdout, and hangs before claiming anything, until it is killed. It is
// the window between a worker's dequeue and its claim, held open.
func TestThief(t *testing.T) {
	url := os.Getenv(thiefEnv)
	if url == "" {
		t.Skip("run by TestTakenButUnclaimedTasksRunAgain")
	}
	opt, err := asynq.ParseRedisURI(url)
	if err != nil {
		t.Fatal(err)
	}
	srv := asynq.NewServer(opt, asynq.Config{Concurrency: 16, Queues: pipeline.QueueWeights(), LogLevel: asynq.FatalLevel})
	err = srv.Run(asynq.HandlerFunc(func(ctx context.Context, task *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		fmt.Printf("took %s\n", id)
		select {} // dequeued, never claimed
	}))
	t.Fatal(err)
}

// A worker killed after taking tasks off the queue and before claiming
// their items leaves no worker on the items' rows: only their stale queue
// leases show that they are stuck. They run again on another worker within
// the bound that holds for claimed items (heartbeat TTL + scheduler
// interval + a few seconds), not after asynq's lease and recoverer (62–102 s
// before). Scheduler and heartbeat settings are the defaults.
func TestTakenButUnclaimedTasksRunAgain(t *testing.T) {
	processDrill(t)
	g := newGate()
	g.open()
	f := newFleet(t, g.handler(), func(c *config.Config) {
		d := config.Default()
		c.Scheduler.Interval, c.Scheduler.RequeueAfter = d.Scheduler.Interval, d.Scheduler.RequeueAfter
	})
	f.scheduler()
	ctx := context.Background()

	thief := exec.Command(os.Args[0], "-test.run=^TestThief$", "-test.v=false")
	thief.Env = append(os.Environ(), thiefEnv+"="+f.cfg.RedisURL)
	thief.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := thief.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := thief.Start(); err != nil {
		t.Fatal(err)
	}
	took := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "took "); ok {
				took <- id
			}
		}
	}()
	killed := false
	defer func() {
		if !killed {
			_ = thief.Process.Kill()
			_ = thief.Wait()
		}
	}()

	ids := f.submit(1)
	items, err := f.sub.Store.ListItems(ctx, ids[0], review.StageIntent)
	if err != nil || len(items) == 0 {
		t.Fatalf("intent items: %v %v", items, err)
	}
	for range items {
		select {
		case <-took:
		case <-time.After(time.Minute):
			t.Fatal("the thief never took every intent task")
		}
	}
	for _, it := range items {
		cur, err := f.sub.Store.GetItem(ctx, ids[0], review.StageIntent, it.Key)
		if err != nil || cur.WorkerID != "" || cur.Status != review.ItemPending {
			t.Fatalf("item %s before the kill: %+v %v; want pending and unclaimed", it.Key, cur, err)
		}
	}
	_ = thief.Process.Signal(syscall.SIGKILL)
	_ = thief.Wait()
	killed = true
	at := time.Now()
	f.startWorker()

	var worst time.Duration
	for _, it := range items {
		for {
			cur, err := f.sub.Store.GetItem(ctx, ids[0], review.StageIntent, it.Key)
			if err != nil {
				t.Fatal(err)
			}
			if cur.Status != review.ItemPending || cur.WorkerID != "" {
				worst = max(worst, time.Since(at))
				break
			}
			if time.Since(at) > 3*time.Minute {
				t.Fatalf("item %s never ran again", it.Key)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	bound := heartbeat.TTL + f.cfg.Scheduler.Interval + 3*time.Second
	t.Logf("%d tasks taken and never claimed: running again %s after the kill (bound %s: heartbeat TTL %s + scheduler interval %s + 3 s)",
		len(items), worst.Round(100*time.Millisecond), bound, heartbeat.TTL, f.cfg.Scheduler.Interval)
	// A few seconds for the worker started after the kill to come up.
	if worst > bound+5*time.Second {
		t.Errorf("recovery took %s, over the bound %s", worst.Round(100*time.Millisecond), bound)
	}
	if r := f.wait(ids, 3*time.Minute)[ids[0]]; r.Status != review.ReviewDone {
		t.Fatalf("review after the kill: %+v", r)
	}
}
