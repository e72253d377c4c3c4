package progress_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/reviewfleet/reviewfleet/internal/progress"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

type servers []*asynq.ServerInfo

func (s servers) Servers() ([]*asynq.ServerInfo, error) { return s, nil }

// A running review says why it is not moving: first that nothing serves
// its stage's queue, then, with a worker, which outage an item was given
// back for; a review that ended says nothing.
func TestStalledSaysWhy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	id, err := st.CreateReview(ctx, review.NewReview{Repo: "/repo", Source: "git", IntentMode: "per_file", Timeout: time.Hour,
		Items: []review.Item{{Stage: review.StageIntent, Key: "p1", Payload: json.RawMessage(`{}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.StartItem(ctx, id, review.StageIntent, "p1"); err != nil {
		t.Fatal(err)
	}
	if err := st.ReturnItem(ctx, id, review.StageIntent, "p1", "dial tcp 127.0.0.1:5432: connect: connection refused", false); err != nil {
		t.Fatal(err)
	}
	r, err := st.GetReview(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := progress.Stalled(ctx, st, servers{}, r); !strings.Contains(got, "no live worker") || !strings.Contains(got, "reviewfleet:intent") {
		t.Errorf("no server: %q", got)
	}
	live := servers{{Status: "active", Queues: map[string]int{"reviewfleet:intent": 10}}}
	if got := progress.Stalled(ctx, st, live, r); !strings.Contains(got, "intent p1 was given back") || !strings.Contains(got, "connection refused") {
		t.Errorf("an item given back by an outage: %q", got)
	}
	r.Status = review.ReviewDone
	if got := progress.Stalled(ctx, st, servers{}, r); got != "" {
		t.Errorf("an ended review: %q", got)
	}
}
