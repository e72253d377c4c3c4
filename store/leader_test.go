package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

// Of two processes only one leads; when the leader's session dies (a
// killed process's connection closes), its Check says so and the other
// takes the lock at its next try.
func TestLeadershipPassesWhenTheLeaderDies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.IsolatedSchema(t)
	var sts []*store.Store
	for range 2 {
		st, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		sts = append(sts, st)
	}
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for _, name := range []string{"reviewfleet:reconciler", "reviewfleet:bulk-schedule", "x"} {
		a, err := sts[0].HoldLeader(ctx, name)
		if err != nil || a == nil {
			t.Fatalf("%s: first holder: %v, %v", name, a, err)
		}
		if b, err := sts[1].HoldLeader(ctx, name); err != nil || b != nil {
			t.Fatalf("%s: second process led too: %v, %v", name, b, err)
		}
		if err := a.Check(ctx); err != nil {
			t.Fatalf("%s: the holder's check: %v", name, err)
		}
		// The leader dies: its backend goes away, as when its process's
		// connection closes.
		if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_locks
			WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
			  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
			  AND ((classid::bigint << 32) | objid::bigint) = hashtextextended(coalesce(current_schema(), '') || ':' || $1, 0)`, name); err != nil {
			t.Fatal(err)
		}
		if err := a.Check(ctx); !errors.Is(err, store.ErrLeadershipLost) {
			t.Fatalf("%s: a dead leader's check: %v, want ErrLeadershipLost", name, err)
		}
		a.Release()
		// The dead session's backend lets go as it exits, a moment after
		// the kill: the follower tries again every 20 ms, for at most 2 s.
		var b *store.Leadership
		for deadline := time.Now().Add(2 * time.Second); b == nil; time.Sleep(20 * time.Millisecond) {
			if b, err = sts[1].HoldLeader(ctx, name); err != nil {
				t.Fatal(err)
			}
			if b == nil && time.Now().After(deadline) {
				t.Fatalf("%s: the follower did not take over within 2s", name)
			}
		}
		if err := b.Check(ctx); err != nil {
			t.Fatal(err)
		}
		b.Release()
		b.Release() // twice is harmless
		if c, err := sts[0].HoldLeader(ctx, name); err != nil || c == nil {
			t.Fatalf("%s: a released lock is free again: %v, %v", name, c, err)
		} else {
			c.Release()
		}
	}
}
