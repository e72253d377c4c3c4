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

// queryLog records the statements a pool's sessions send.
type queryLog struct {
	mu   sync.Mutex
	sqls []string
}

func (l *queryLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	l.sqls = append(l.sqls, d.SQL)
	l.mu.Unlock()
	return ctx
}

func (l *queryLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (l *queryLog) count(sql string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.sqls {
		if s == sql {
			n++
		}
	}
	return n
}

// A worker's pool opens a session per slot before any task asks for one,
// keeps them, and warms each.
func TestMinConnsOpensWarmSessionsAhead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := &queryLog{}
	st, err := store.OpenWith(ctx, testenv.IsolatedSchema(t), store.PoolOptions{MaxConns: 6, MinConns: 4, Warm: true, Tracer: log})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	deadline := time.Now().Add(10 * time.Second)
	for st.Sessions() < 4 || log.count(store.WarmSQL()) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s the pool holds %d sessions, %d warmed; want the 4 of MinConns, each warmed",
				st.Sessions(), log.count(store.WarmSQL()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := st.Ping(ctx); err != nil {
		t.Fatalf("a warmed session does not answer: %v", err)
	}
}

// A migration holding a task table's lock does not hold a new session
// back: the warm-up gives up on that table instead of waiting (and, its
// statements being one transaction, deadlocking with a migration that
// then locks a table the warm-up already read).
func TestWarmUpDoesNotWaitForALockedTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.IsolatedSchema(t)
	mig, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer mig.Close(ctx)
	tx, err := mig.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "LOCK TABLE findings IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	octx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := store.OpenWith(octx, dsn, store.PoolOptions{Warm: true})
	if err != nil {
		t.Fatalf("opening a warm pool while a table is locked: %v", err)
	}
	st.Close()
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
