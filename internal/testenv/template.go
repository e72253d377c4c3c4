package testenv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/reviewfleet/reviewfleet/migrations"
)

// templateLock is the advisory lock (taken in the database the test DSN
// names) under which one process at a time builds a template, so the
// package test binaries `go test ./...` runs side by side migrate once.
// Each template has its own: a test that rebuilds a template of its own
// (a drop forces a checkpoint, which takes tens of seconds on a busy
// machine) must not hold up every test binary that needs the real one.
func templateLock(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("rftemp\x00" + name))
	return int64(h.Sum64())
}

// templatePrefix starts the name of every template database testenv
// builds; the rest is a digest of the migrations, so a change to them
// builds a new template and branches with different migrations sharing a
// server never hand out each other's schema.
const templatePrefix = "reviewfleet_tmpl_"

// errNoCreateDB reports that the test role may not create databases.
var errNoCreateDB = errors.New("the role may not create databases")

var (
	tmplMu    sync.Mutex
	tmplNames = map[string]string{} // base DSN → template database name
	tmplErrs  = map[string]error{}  // base DSN → errNoCreateDB, not worth asking again
)

// migratedTemplate returns the name of a template database on base's
// server holding every migration, building it the first time any process
// asks for this set of migrations.
func migratedTemplate(ctx context.Context, base string) (string, error) {
	tmplMu.Lock()
	defer tmplMu.Unlock()
	if name, ok := tmplNames[base]; ok {
		return name, nil
	}
	if err, ok := tmplErrs[base]; ok {
		return "", err
	}
	digest, err := migrationsDigest(migrations.FS)
	if err != nil {
		return "", err
	}
	name := templatePrefix + digest[:16]
	if err := ensureTemplate(ctx, base, name, migrations.FS); err != nil {
		if errors.Is(err, errNoCreateDB) {
			tmplErrs[base] = err
		}
		return "", err
	}
	tmplNames[base] = name
	dropStalePools(ctx, base, digest[:16])
	return name, nil
}

// dropStalePools drops the pooled test databases copied from templates of
// other sets of migrations (an older checkout's), so each change to the
// migrations does not leave a pool behind. A slot another process holds
// is left alone, and so is any database that cannot be dropped now.
func dropStalePools(ctx context.Context, base, keep string) {
	c := clientFor(base)
	_ = c.withAdmin(ctx, func(conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, "SELECT datname FROM pg_database WHERE datname LIKE $1", poolPrefix+"%")
		if err != nil {
			return err
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, name := range names {
			rest := strings.TrimPrefix(name, poolPrefix)
			digest, slot, ok := strings.Cut(rest, "_")
			n, err := strconv.Atoi(slot)
			if !ok || err != nil || digest == keep {
				continue
			}
			// This session takes a lock it already holds again: a slot of
			// this process's own is skipped by its bookkeeping.
			s := poolSlot{space: poolLockSpace(digest), n: n}
			var got bool
			if c.held[s] || conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", s.space, int32(n)).Scan(&got) != nil || !got {
				continue
			}
			_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize())
			_, _ = conn.Exec(ctx, "SELECT pg_advisory_unlock($1, $2)", s.space, int32(n))
		}
		return nil
	})
}

// migrationsDigest hashes the names and contents of the SQL files in fsys.
func migrationsDigest(fsys fs.FS) (string, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return "", fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return "", fmt.Errorf("read migration %s: %w", n, err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ensureTemplate makes database name on base's server hold fsys's
// migrations, applied by goose as store.Migrate applies them. A finished
// template is marked IS_TEMPLATE and closed to connections: CREATE
// DATABASE … TEMPLATE refuses a source anyone is connected to, and the
// marks tell a finished template from one a killed process left half
// migrated, which is dropped and built again.
func ensureTemplate(ctx context.Context, base, name string, fsys fs.FS) error {
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", redactDSN(base), err)
	}
	defer conn.Close(context.Background())
	// A finished template never changes: most processes find it so and
	// need no lock.
	if finished, err := templateFinished(ctx, conn, name); err != nil || finished {
		return err
	}
	key := templateLock(name)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		return fmt.Errorf("lock the template database %s: %w", name, err)
	}
	defer func() { _, _ = conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", key) }()

	var isTemplate, allowConn bool
	err = conn.QueryRow(ctx, "SELECT datistemplate, datallowconn FROM pg_database WHERE datname = $1", name).Scan(&isTemplate, &allowConn)
	switch {
	case err == nil && isTemplate && !allowConn:
		return nil
	case err == nil:
		if err := dropDatabase(ctx, conn, name); err != nil {
			return fmt.Errorf("drop unfinished template: %w", err)
		}
	case !errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("look up template database %s: %w", name, err)
	}
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident+" TEMPLATE template0"); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42501" {
			return fmt.Errorf("create template database %s: %w (%w)", name, errNoCreateDB, err)
		}
		return fmt.Errorf("create template database %s: %w", name, err)
	}
	dsn, err := withDatabase(base, name)
	if err != nil {
		return err
	}
	if err := migrate(ctx, dsn, fsys); err != nil {
		return fmt.Errorf("migrate template database %s: %w", name, err)
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+ident+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"); err != nil {
		return fmt.Errorf("mark template database %s: %w", name, err)
	}
	return nil
}

// templateFinished reports whether database name is a finished template:
// marked IS_TEMPLATE and closed to connections, as ensureTemplate leaves it.
func templateFinished(ctx context.Context, conn *pgx.Conn, name string) (bool, error) {
	var finished bool
	err := conn.QueryRow(ctx, "SELECT datistemplate AND NOT datallowconn FROM pg_database WHERE datname = $1", name).Scan(&finished)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up template database %s: %w", name, err)
	}
	return finished, nil
}

// migrate applies every migration in fsys to the database dsn names.
func migrate(ctx context.Context, dsn string, fsys fs.FS) error {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("parse DSN %s: %w", redactDSN(dsn), err)
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}

// createFromTemplate creates database name as a copy of tmpl through
// conn, a session to another database of the server. Creating several
// copies at once is fine; a source busy for a moment (another process
// finishing the template) is retried.
func createFromTemplate(ctx context.Context, conn *pgx.Conn, name, tmpl string) error {
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE " + pgx.Identifier{tmpl}.Sanitize()
	for attempt := 0; ; attempt++ {
		_, err := conn.Exec(ctx, sql)
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" || attempt == 20 {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// dropDatabase drops name, ending any session still connected to it (a
// pool a test forgot to close must not keep the database alive).
func dropDatabase(ctx context.Context, conn *pgx.Conn, name string) error {
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+ident+" WITH IS_TEMPLATE false"); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "3D000" {
			return nil
		}
		return err
	}
	_, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)")
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42601" {
		// Before PostgreSQL 13 there is no FORCE: end the sessions first.
		if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name); err != nil {
			return err
		}
		_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident)
		return err
	}
	return err
}

// withDatabase returns dsn naming database name instead of its own.
func withDatabase(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("parse DSN %s: %w", redactDSN(dsn), err)
		}
		u.Path = "/" + name
		u.RawPath = ""
		return u.String(), nil
	}
	// In a keyword/value DSN the last of a repeated keyword wins.
	return strings.TrimSpace(dsn) + " dbname=" + name, nil
}
