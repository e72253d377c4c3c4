package bulk

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

// When the leading scheduler's database session dies under it (its
// connection cut), it stops leading at its next check, and the other
// scheduler leads at its own next try. The two may overlap for up to one
// check; a firing is an asynq.Unique task with a batch ID of its schedule
// and time, so a firing enqueued by both is still submitted once.
func TestLeaderWhoseSessionDiesStepsDown(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dsn := testenv.IsolatedSchema(t)
	redisOpt, err := asynq.ParseRedisURI(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	const check = 100 * time.Millisecond
	var scheds []*Scheduler
	for i := range 2 {
		st, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		s := &Scheduler{Redis: redisOpt, Store: st, Log: quiet, ID: []string{"a", "b"}[i], LeaderCheck: check,
			Schedules: []config.Schedule{{Name: "yearly", Cron: "@yearly", Manifest: "/nonexistent"}}}
		sctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = s.Run(sctx) }()
		t.Cleanup(func() { stop(); <-done })
		scheds = append(scheds, s)
	}
	waitFor := func(what string, within time.Duration, cond func() bool) time.Duration {
		t.Helper()
		start := time.Now()
		for !cond() {
			if time.Since(start) > within {
				t.Fatalf("%s: not within %s", what, within)
			}
			time.Sleep(10 * time.Millisecond)
		}
		return time.Since(start)
	}
	waitFor("a leader", 10*time.Second, func() bool { return scheds[0].IsLeader() || scheds[1].IsLeader() })
	leader := 0
	if scheds[1].IsLeader() {
		leader = 1
	}
	if scheds[1-leader].IsLeader() {
		t.Fatal("both schedulers lead")
	}

	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var killed int
	if err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
		  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND ((classid::bigint << 32) | objid::bigint) = hashtextextended(coalesce(current_schema(), '') || ':' || $1, 0)`,
		LeaderLock).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("cut the leader's session: %d sessions, %v", killed, err)
	}
	// Slack over the two checks for a busy machine.
	took := waitFor("the other scheduler to lead", 5*time.Second, func() bool { return scheds[1-leader].IsLeader() })
	waitFor("the cut leader to step down", 5*time.Second, func() bool { return !scheds[leader].IsLeader() })
	t.Logf("the follower led %s after the leader's session was cut (check every %s)", took.Round(time.Millisecond), check)
}
