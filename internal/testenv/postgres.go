package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/reviewfleet/reviewfleet/internal/localenv"
	"github.com/reviewfleet/reviewfleet/migrations"
)

// DefaultPostgresDSN is used when TEST_DATABASE_URL is unset.
const DefaultPostgresDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// pgEnv is the Postgres server the tests of this process use.
type pgEnv struct {
	dsn    string
	local  *localenv.LocalPostgres // nil unless an ephemeral cluster was started
	tmpDir string
}

var (
	pgOnce  sync.Once
	pgMu    sync.Mutex // guards pgState against Shutdown
	pgState *pgEnv
	pgErr   error
)

// PostgresDSN returns the DSN of a Postgres server for tests.
//
// It is TEST_DATABASE_URL if set (the test fails if that server does not
// answer), else DefaultPostgresDSN if a server answers there, else the DSN of
// an ephemeral local cluster started once per test process and stopped by
// Shutdown. Tests that create objects should use IsolatedSchema or EmptySchema
// instead.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	pgOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		env, err := resolvePostgres(ctx, os.Getenv("TEST_DATABASE_URL"), DefaultPostgresDSN)
		pgMu.Lock()
		pgState, pgErr = env, err
		pgMu.Unlock()
	})
	pgMu.Lock()
	defer pgMu.Unlock()
	if pgErr != nil {
		t.Fatalf("testenv: %v", pgErr)
	}
	if pgState == nil {
		t.Fatal("testenv: PostgresDSN called after Shutdown")
	}
	return pgState.dsn
}

// Shutdown stops the ephemeral Postgres cluster and the redis-server if this process
// started them, and removes their files. Call it from TestMain after m.Run.
func Shutdown() {
	stopOwnRedis()
	closePoolClients()
	pgMu.Lock()
	env := pgState
	pgState = nil
	pgMu.Unlock()
	if env == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := env.close(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
	}
}

// resolvePostgres applies PostgresDSN's rules: explicit must answer;
// otherwise fallback is tried, then an ephemeral cluster is started.
func resolvePostgres(ctx context.Context, explicit, fallback string) (*pgEnv, error) {
	if explicit != "" {
		if err := ping(ctx, explicit); err != nil {
			return nil, fmt.Errorf("TEST_DATABASE_URL is set but its server does not answer: %w", err)
		}
		return &pgEnv{dsn: explicit}, nil
	}
	if err := ping(ctx, fallback); err == nil {
		return &pgEnv{dsn: fallback}, nil
	}
	dir, err := os.MkdirTemp("", "reviewfleet-testpg-")
	if err != nil {
		return nil, fmt.Errorf("create directory for an ephemeral postgres: %w", err)
	}
	// MkdirTemp's 0700 would keep out the unprivileged account the server
	// runs as under root; the directory is ours to open.
	if err := os.Chmod(dir, 0o711); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("open the directory of an ephemeral postgres: %w", err)
	}
	local, err := localenv.StartPostgres(ctx, localenv.PostgresOptions{
		DataDir:   filepath.Join(dir, "data"),
		Ephemeral: true,
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("no postgres at %s and no ephemeral cluster either (set TEST_DATABASE_URL to use a server): %w", redactDSN(fallback), err)
	}
	return &pgEnv{dsn: local.DSN(), local: local, tmpDir: dir}, nil
}

func (e *pgEnv) close(ctx context.Context) error {
	if e.local == nil {
		return nil
	}
	if err := e.local.Stop(ctx); err != nil {
		return fmt.Errorf("stop ephemeral postgres in %s: %w", e.tmpDir, err)
	}
	if err := os.RemoveAll(e.tmpDir); err != nil {
		return fmt.Errorf("remove ephemeral postgres files: %w", err)
	}
	return nil
}

func ping(ctx context.Context, dsn string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", redactDSN(dsn), err)
	}
	defer conn.Close(context.Background())
	if err := conn.Ping(ctx); err != nil {
		return fmt.Errorf("ping %s: %w", redactDSN(dsn), err)
	}
	return nil
}

// IsolatedSchema returns the DSN of a database the test has to itself,
// holding the reviewfleet schema with every migration applied and no rows.
// The database is a copy of a template migrated once per server and set of
// migrations (see migratedTemplate), taken from a pool of copies that
// earlier tests used (see acquirePooled): reusing a copy costs the server
// a truncation of the few tables the last test wrote, where migrating
// takes most of a second and a fresh copy a file copy and a checkpoint.
// Tables live in the public schema, as in production, and advisory locks
// are per database, so tests running in parallel share nothing.
func IsolatedSchema(t testing.TB) string {
	t.Helper()
	return isolatedOn(t, PostgresDSN(t))
}

// isolatedOn is IsolatedSchema on the server base names.
func isolatedOn(t testing.TB, base string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// A role that may not create databases still gets isolation, at the
	// price of migrating a schema of its own.
	migratedSchema := func() string {
		dsn := emptySchemaOn(t, base)
		if err := migrate(ctx, dsn, migrations.FS); err != nil {
			t.Fatalf("testenv: migrate a fresh schema: %v", err)
		}
		return dsn
	}
	tmpl, err := migratedTemplate(ctx, base)
	if errors.Is(err, errNoCreateDB) {
		return migratedSchema()
	}
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	db, err := acquirePooled(ctx, base, tmpl, strings.TrimPrefix(tmpl, templatePrefix))
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42501" {
			return migratedSchema()
		}
		t.Fatalf("testenv: a database copied from %s: %v", tmpl, err)
	}
	t.Cleanup(db.release)
	dsn, err := withDatabase(base, db.name)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return dsn
}

// EmptySchema creates a fresh, empty schema with a random name in the test
// database and returns a DSN whose connections use it as their only
// search_path, so unqualified names (tables, goose's version table) land in
// it. It is for tests of migrating itself; the schema and everything in it
// are dropped when the test ends.
func EmptySchema(t testing.TB) string {
	t.Helper()
	return emptySchemaOn(t, PostgresDSN(t))
}

func emptySchemaOn(t testing.TB, base string) string {
	t.Helper()
	schema := "test_" + randomHex(t, 8)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := execOnce(ctx, base, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("testenv: create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := execOnce(ctx, base, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("testenv: drop schema %s: %v", schema, err)
		}
	})
	dsn, err := withSearchPath(base, schema)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return dsn
}

// withSearchPath adds search_path to a URL or keyword/value DSN; pgx sends
// parameters it does not know itself to the server as run-time settings.
func withSearchPath(dsn, schema string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("parse DSN %s: %w", redactDSN(dsn), err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	return strings.TrimSpace(dsn) + " search_path=" + schema, nil
}

func execOnce(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", redactDSN(dsn), err)
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("testenv: random name: %v", err)
	}
	return hex.EncodeToString(b)
}

// redactDSN hides a password in a URL DSN for messages.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	return u.Redacted()
}
