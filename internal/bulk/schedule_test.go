package bulk

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/githubfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

func TestFiringTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 4, 9, 17, 30, 0, time.UTC)
	for spec, want := range map[string]time.Time{
		"0 2 * * *":   time.Date(2026, 3, 4, 2, 0, 0, 0, time.UTC),
		"*/5 * * * *": time.Date(2026, 3, 4, 9, 15, 0, 0, time.UTC),
		"@weekly":     time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		"@every 10m":  time.Date(2026, 3, 4, 9, 17, 30, 0, time.UTC), // the second it first ran
	} {
		got, err := FiringTime(spec, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("FiringTime(%q) = %v, %v; want %v", spec, got, err, want)
		}
	}
	again := time.Date(2026, 3, 4, 9, 17, 30, 0, time.UTC) // the same firing, seen by another scheduler
	if ScheduleBatchID("n", now) != ScheduleBatchID("n", again) || ScheduleBatchID("n", now) == ScheduleBatchID("m", now) ||
		ScheduleBatchID("n", now) == ScheduleBatchID("n", now.Add(time.Minute)) {
		t.Error("batch IDs of firings are not derived from name and time")
	}
}

// Two scheduler processes with the same schedule: one leads at a time,
// every firing is handled once, and when the leader stops the other takes
// over and goes on firing.
func TestTwoSchedulersFireOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	repo, err := demo.WriteRepo(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// A manifest names remote repositories only: the repository is
	// served over http on the loopback interface.
	gh := githubfake.New()
	defer gh.Close()
	repoURL, err := gh.ServePublicGit("acme", "nightly", filepath.Join(repo.Dir, ".git"))
	if err != nil {
		t.Skip(err)
	}
	line, _ := json.Marshal(Entry{Repo: repoURL, Base: repo.Base, Head: repo.Head})
	manifest := filepath.Join(t.TempDir(), "nightly.jsonl")
	if err := os.WriteFile(manifest, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.DatabaseURL = testenv.IsolatedSchema(t)
	cfg.RedisURL = testenv.RedisURL(t)
	cfg.Expert.SnapshotDir = t.TempDir()
	cfg.Snapshot.AllowLoopbackHTTP = true
	cfg.Scheduler.Schedules = []config.Schedule{{Name: "often", Cron: "@every 3s", Manifest: manifest}}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	redisOpt, err := asynq.ParseRedisURI(cfg.RedisURL)
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	firings := map[string]int{}
	var order []string
	onFiring := func(_, id string) {
		mu.Lock()
		defer mu.Unlock()
		if firings[id] == 0 {
			order = append(order, id)
		}
		firings[id]++
	}
	distinct := func() int { mu.Lock(); defer mu.Unlock(); return len(order) }

	var scheds []*Scheduler
	var stops []func()
	for i := range 2 {
		st, err := store.Open(ctx, cfg.DatabaseURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		if i == 0 {
			if _, err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
		}
		s := &Scheduler{Redis: redisOpt, Store: st, Reviews: storedReviews{st: st, cfg: cfg}, Log: quiet,
			Schedules: cfg.Scheduler.Schedules, ID: []string{"a", "b"}[i],
			LeaderCheck: 200 * time.Millisecond, SyncInterval: 500 * time.Millisecond, OnFiring: onFiring}
		sctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = s.Run(sctx) }()
		scheds = append(scheds, s)
		stops = append(stops, func() { stop(); <-done })
	}
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()

	both := false
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			if scheds[0].IsLeader() && scheds[1].IsLeader() {
				both = true
			}
			select {
			case <-ctx.Done():
				t.Fatalf("waiting for %s: %v", what, ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	waitFor("two firings", func() bool { return distinct() >= 2 })
	leader := 0
	if scheds[1].IsLeader() {
		leader = 1
	}
	if !scheds[leader].IsLeader() {
		t.Fatal("no scheduler leads")
	}
	stops[leader]()
	stops[leader] = func() {}
	before := distinct()
	stopped := time.Now()
	waitFor("the other scheduler to take over", func() bool { return scheds[1-leader].IsLeader() })
	// The stopped leader gave the lock back: the follower leads at its
	// next try, one LeaderCheck later (slack for a busy machine).
	if took := time.Since(stopped); took > 2*time.Second {
		t.Errorf("the follower took over after %s, want within one leader check (200ms)", took)
	}
	waitFor("a firing after the takeover", func() bool { return distinct() > before })
	if both {
		t.Error("both schedulers led at once")
	}

	mu.Lock()
	defer mu.Unlock()
	for id, n := range firings {
		if n != 1 {
			t.Errorf("firing %s handled %d times", id, n)
		}
	}
	st := scheds[1-leader].Store
	for _, id := range order {
		b, err := st.GetBatch(ctx, id)
		if err != nil {
			// A firing being handled right now may not have its batch yet.
			if id == order[len(order)-1] {
				continue
			}
			t.Fatalf("firing %s has no batch: %v", id, err)
		}
		if b.Entries != 1 || b.Labels["schedule"] != "often" {
			t.Errorf("batch of firing %s: %+v", id, b)
		}
	}
}

// storedReviews prepares and stores the reviews of the firings' batches
// without a fleet to admit them: the batches are what these tests check.
type storedReviews struct {
	st  *store.Store
	cfg config.Config
}

func (r storedReviews) Prepare(ctx context.Context, req submit.Request) (review.NewReview, error) {
	req.CacheDir = r.cfg.Expert.SnapshotDir // clones go under the test's directory
	return submit.Prepare(ctx, r.cfg, req)
}

func (r storedReviews) Create(ctx context.Context, nr review.NewReview) (string, error) {
	return r.st.CreateReview(ctx, nr)
}
