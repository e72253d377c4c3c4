package drill

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/heartbeat"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// gate holds every model call until it is opened.
type gate struct {
	mu sync.Mutex
	ch chan struct{}
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ch = make(chan struct{})
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.ch:
	default:
		close(g.ch)
	}
}

func (g *gate) handler() llmfake.Handler {
	return func(ctx context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		g.mu.Lock()
		ch := g.ch
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		return demo.Handler(ctx, req)
	}
}

// A worker process killed while it holds items: the items run again on
// another worker once the heartbeat is gone, without waiting for asynq's
// lease, and the review ends with the same rows as one without the kill.
// The scheduler and heartbeat settings are the defaults.
func TestKilledWorkersItemsRunAgain(t *testing.T) {
	processDrill(t)
	rounds := 1
	if os.Getenv("DRILL") == "1" {
		rounds = 5
	}
	g := newGate()
	g.open()
	f := newFleet(t, g.handler(), func(c *config.Config) {
		d := config.Default()
		c.Scheduler.Interval, c.Scheduler.RequeueAfter = d.Scheduler.Interval, d.Scheduler.RequeueAfter
	})
	f.scheduler()
	ctx := context.Background()

	// A review without faults gives the rows every review must end with.
	ref := f.startWorker()
	refID := f.submit(1)
	if ended := f.wait(refID, 3*time.Minute); ended[refID[0]].Status != review.ReviewDone {
		t.Fatalf("reference review: %+v", ended[refID[0]])
	}
	want := f.rows(refID[0])
	f.kill(ref)

	var recoveries []time.Duration
	for round := range rounds {
		g.close()
		a := f.startWorker()
		aID := <-a.id
		ids := f.submit(1)
		// Wait until A holds items (its model calls are held at the gate).
		var held []review.Item
		deadline := time.Now().Add(2 * time.Minute)
		for len(held) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: worker %s never started an item", round, aID)
			}
			items, err := f.sub.Store.ClaimedItems(ctx, ids[0])
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				if it.WorkerID == aID {
					held = append(held, it)
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		f.kill(a)
		killed := time.Now()
		b := f.startWorker()
		g.open()

		// Measure until every held item was started again elsewhere.
		rescued := false
		for _, it := range held {
			for {
				cur, err := f.sub.Store.GetItem(ctx, it.ReviewID, it.Stage, it.Key)
				if err != nil {
					t.Fatal(err)
				}
				if cur.Status != review.ItemPending || (cur.WorkerID != "" && cur.WorkerID != aID) {
					rescued = rescued || cur.Generation > it.Generation
					break
				}
				if time.Since(killed) > 3*time.Minute {
					t.Fatalf("round %d: item %s/%s of the killed worker never ran again", round, it.Stage, it.Key)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		took := time.Since(killed)
		recoveries = append(recoveries, took)
		t.Logf("round %d: %d items of the killed worker running again after %s (rescued by heartbeat: %v)", round, len(held), took.Round(100*time.Millisecond), rescued)
		if !rescued {
			t.Errorf("round %d: the items ran again through asynq's lease, not through the heartbeat rescue", round)
		}
		ended := f.wait(ids, 3*time.Minute)
		if r := ended[ids[0]]; r.Status != review.ReviewDone {
			t.Fatalf("round %d: review %+v", round, r)
		}
		if got := f.rows(ids[0]); got != want {
			t.Errorf("round %d: review rows %+v, want %+v as without the kill", round, got, want)
		}
		f.kill(b)
	}
	t.Logf("recovery after SIGKILL over %d rounds: p50 %s, max %s (heartbeat TTL %s, scheduler interval %s)",
		len(recoveries), percentile(recoveries, 50).Round(100*time.Millisecond), percentile(recoveries, 100).Round(100*time.Millisecond),
		heartbeat.TTL, f.cfg.Scheduler.Interval)
}
