package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

// A worker's pool opens a session per slot before any task asks for one,
// and keeps them.
func TestMinConnsOpensSessionsAhead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.OpenWith(ctx, testenv.IsolatedSchema(t), store.PoolOptions{MaxConns: 6, MinConns: 4, Warm: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	deadline := time.Now().Add(10 * time.Second)
	for st.Sessions() < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("the pool holds %d sessions after 10 s, want the 4 of MinConns", st.Sessions())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := st.Ping(ctx); err != nil {
		t.Fatalf("a warmed session does not answer: %v", err)
	}
}

// The warm-up names only tables the migrations create: a table renamed or
// dropped would leave every table after it cold, silently.
func TestWarmSQLRunsOnTheSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.IsolatedSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, store.WarmSQL(), pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatalf("warm-up on a migrated schema: %v", err)
	}
}
