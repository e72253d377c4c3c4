package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

// Several migrate processes started together (one per pod of a rollout)
// must all succeed and apply each migration exactly once.
func TestParallelMigrateAppliesOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dsn := testenv.EmptySchema(t)
	const runners = 6
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		applied = map[int64]int{}
		errs    []error
	)
	start := make(chan struct{})
	for range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := store.Open(ctx, dsn) // a pool of its own, like a separate process
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			defer st.Close()
			<-start
			res, err := st.Migrate(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			}
			for _, r := range res {
				applied[r.Version]++
			}
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		t.Errorf("migrate: %v", err)
	}
	if len(applied) == 0 {
		t.Fatal("no migration was applied")
	}
	for v, n := range applied {
		if n != 1 {
			t.Errorf("migration %d applied %d times, want once", v, n)
		}
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var rows, distinct int
	if err := conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT version_id) FROM goose_db_version WHERE version_id > 0`).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != distinct || rows != len(applied) {
		t.Errorf("goose_db_version holds %d rows for %d versions, %d applied", rows, distinct, len(applied))
	}
}

func TestPoolOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.OpenWith(ctx, testenv.IsolatedSchema(t), store.PoolOptions{MaxConns: 7, StatementTimeout: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.MaxConns() != 7 {
		t.Errorf("max conns = %d, want 7", st.MaxConns())
	}
	got, err := st.Setting(ctx, "statement_timeout")
	if err != nil || got != "1500ms" {
		t.Errorf("statement_timeout = %q, %v; want 1500ms", got, err)
	}
}
