// Package store is reviewfleet's Postgres layer. It exposes domain methods
// (CreateReview, FinishIntentItem, Advance, …) and keeps SQL to itself:
// callers never import pgx.
//
// The SQL lives in queries/*.sql. sqlc (sqlc.yaml; `make sqlc`) compiles
// each statement against the schema the migrations build and generates
// typed Go into internal/sqlcdb; CI fails when a statement no longer fits
// the schema or the generated code is stale. Methods here only map the
// generated rows onto the domain types of internal/review: a nullable
// column arrives as a pointer and becomes the domain's "none" ("", 0, the
// zero time) in one place per type.
//
// A few statements stay hand-written, each for a reason sqlc cannot meet:
//   - Prune and its helpers (prune.go) compose statements at run time from
//     shared fragments (prunable, referencedHashes), delete in batches
//     through one generic loop, and fill a temporary table (prune_refs)
//     that no migration declares; CountUnreferencedMessages shares those
//     fragments so that it counts exactly what prune deletes.
//   - RetryDelivery: sqlc v1.31.1 misplaces its parameters in that
//     statement (a CASE on attempts, then a doubled interval) and refuses
//     to generate it.
//   - ExplainPendingPage runs EXPLAIN over the generated PendingPage text.
//   - migrationLockID reads current_schema() before any migration ran.
//   - batchstats.go (a batch's progress, per-repository summaries and
//     timings), and the statements added with admission by capacity
//     (admissionCandidates and the pending-item count in admission.go),
//     the feedback and learnings (feedback.go, learnings.go, outcomes.go)
//     and a batch's entries (batchreviews.go) are not converted yet;
//     nothing prevents it.
package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
)

// ErrNotFound is returned when a review, file, item or report does not exist.
var ErrNotFound = errors.New("not found")

// Store is a handle on the reviewfleet database. It is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	q    *sqlcdb.Queries // the type-checked queries of queries/*.sql
}

// PoolOptions sizes the connection pool and bounds statements.
type PoolOptions struct {
	// MaxConns caps the pool (0: pgx's default, the larger of 4 and the
	// number of CPUs).
	MaxConns int
	// MinConns is how many sessions the pool opens at once and keeps open
	// (0: none until they are needed). A worker keeps one per slot, so the
	// first tasks after a start or a quiet spell do not each wait for a
	// session to be set up.
	MinConns int
	// Warm makes every new session plan a query on each table a task
	// uses before the session is handed out, so the server loads those
	// tables' and indexes' catalog entries then, not in the first task's
	// statements (about 1 ms for the first table a session touches).
	Warm bool
	// StatementTimeout makes the server cancel any statement running longer
	// (0: no limit), so a stuck query frees its connection.
	StatementTimeout time.Duration
	// Tracer, when set, traces every query (e.g. otelpgx).
	Tracer pgx.QueryTracer
}

// Open connects to Postgres at dsn and checks the connection.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return OpenWith(ctx, dsn, PoolOptions{})
}

// OpenWith is Open with a sized pool and a statement timeout.
func OpenWith(ctx context.Context, dsn string, opts PoolOptions) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = int32(min(opts.MaxConns, math.MaxInt32))
	}
	if opts.MinConns > 0 {
		cfg.MinConns = max(cfg.MinConns, int32(min(opts.MinConns, int(cfg.MaxConns))))
	}
	if opts.Warm {
		cfg.AfterConnect = warmSession
	}
	if opts.Tracer != nil {
		cfg.ConnConfig.Tracer = opts.Tracer
	}
	if opts.StatementTimeout > 0 {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(opts.StatementTimeout.Milliseconds(), 10)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to postgres at %s: %w", redact(cfg.ConnConfig.Host, cfg.ConnConfig.Port), err)
	}
	return &Store{pool: pool, q: sqlcdb.New(pool)}, nil
}

// taskTables are the tables the pipeline's tasks read and write.
var taskTables = []string{"reviews", "stage_items", "llm_calls", "llm_messages", "review_files", "file_results",
	"findings", "verdicts", "expert_runs", "expert_tool_calls", "reports", "batches", "batch_reviews"}

// warmLockTimeout bounds the warm-up's wait for a table's lock. Its
// statements run as one implicit transaction holding each table's share
// lock to its end, so a migration altering two of them could otherwise
// deadlock with it; waiting out a migration is no reason to hold a new
// session back either.
const warmLockTimeout = "50ms"

// warmSQL plans a query on each of taskTables, in one round trip.
func warmSQL() string {
	var b strings.Builder
	fmt.Fprintf(&b, "SELECT set_config('lock_timeout', '%s', true);", warmLockTimeout)
	for _, t := range taskTables {
		fmt.Fprintf(&b, "SELECT FROM %s LIMIT 0;", t)
	}
	return b.String()
}

// warmSession runs warmSQL in conn. A statement the server refuses (a
// table a later migration adds, a lock not granted in time) leaves the
// tables from there on cold and the session usable; a session that broke
// is refused, so the pool does not hand it out.
func warmSession(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, warmSQL(), pgx.QueryExecModeSimpleProtocol)
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if conn.IsClosed() || !errors.As(err, &pgErr) {
		return fmt.Errorf("warm a new session: %w", err)
	}
	return nil
}

func redact(host string, port uint16) string { return fmt.Sprintf("%s:%d", host, port) }

// Close releases every connection.
func (s *Store) Close() { s.pool.Close() }

// MaxConns is the pool's size limit.
func (s *Store) MaxConns() int { return int(s.pool.Config().MaxConns) }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// translate maps driver errors onto the package's own, once.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "22P02" { // invalid_text_representation, e.g. a bad UUID
		return fmt.Errorf("%w: %s", ErrNotFound, pgErr.Message)
	}
	return err
}

// inTx runs fn in a transaction, committing when it returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Setting reads a run-time setting of a pooled connection (SHOW name).
func (s *Store) Setting(ctx context.Context, name string) (string, error) {
	v, err := s.q.Setting(ctx, name)
	if err != nil {
		return "", fmt.Errorf("read setting %s: %w", name, err)
	}
	return v, nil
}
