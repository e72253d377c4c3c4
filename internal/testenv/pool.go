package testenv

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// A test's database comes from a pool of copies of the template that
// outlive the test process. Creating a copy and dropping it afterwards
// costs the server a file copy, a checkpoint and a cold catalog cache for
// every test (together more CPU than most tests themselves); reusing a
// copy costs truncating the few tables the last test wrote.
//
// Slot n of the pool for one set of migrations is the database
// poolPrefix+digest+"_"+n. A process owns a slot while it holds the
// session advisory lock (poolLockSpace(digest), n) on a connection to the
// base database; the lock goes with the connection, so a killed test
// process frees its slots. The owner empties the database before handing
// it out, and replaces it with a fresh copy when the schema no longer
// matches the one recorded when it was copied (a test created or dropped
// a table, ran a migration down).

// poolPrefix starts the name of every pooled test database.
const poolPrefix = "reviewfleet_test_"

// maxPoolSlots bounds the pool: more tests than this holding a database
// at once wait for one to be released.
const maxPoolSlots = 128

// poolDatabase is a slot of the pool held by one test.
type poolDatabase struct {
	name string
	lock *pgx.Conn // holds the slot's advisory lock until closed
}

// poolLockSpace is the first key of the slots' advisory locks: one key
// space per set of migrations.
func poolLockSpace(digest string) int32 {
	h := fnv.New32a()
	h.Write([]byte(poolPrefix + digest))
	return int32(h.Sum32())
}

// poolName is the database of slot n for a template digest.
func poolName(digest string, n int) string {
	return poolPrefix + digest + "_" + strconv.Itoa(n)
}

// acquirePooled takes a free slot of the pool for template tmpl (whose
// name ends in digest), makes its database an empty copy of the template,
// and returns it. Release closes the lock connection.
func acquirePooled(ctx context.Context, base, tmpl, digest string) (*poolDatabase, error) {
	lock, err := pgx.Connect(ctx, base)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", redactDSN(base), err)
	}
	space := poolLockSpace(digest)
	for {
		for n := range maxPoolSlots {
			var got bool
			if err := lock.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", space, int32(n)).Scan(&got); err != nil {
				lock.Close(context.Background())
				return nil, fmt.Errorf("lock pool slot %d: %w", n, err)
			}
			if !got {
				continue
			}
			name := poolName(digest, n)
			if err := preparePooled(ctx, base, lock, name, tmpl); err != nil {
				lock.Close(context.Background())
				return nil, err
			}
			return &poolDatabase{name: name, lock: lock}, nil
		}
		select {
		case <-ctx.Done():
			lock.Close(context.Background())
			return nil, fmt.Errorf("every one of %d pooled test databases is in use: %w", maxPoolSlots, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// release frees the slot for the next test.
func (p *poolDatabase) release() { p.lock.Close(context.Background()) }

// preparePooled makes database name an empty copy of tmpl: it copies the
// template when the database does not exist, empties it when its schema
// is the one recorded at copy time, and copies it afresh otherwise.
func preparePooled(ctx context.Context, base string, admin *pgx.Conn, name, tmpl string) error {
	var recorded *string
	err := admin.QueryRow(ctx, "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1", name).Scan(&recorded)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return copyPooled(ctx, base, admin, name, tmpl)
	case err != nil:
		return fmt.Errorf("look up pooled database %s: %w", name, err)
	}
	// Sessions a finished test left open (a pool it did not close) must
	// not see, or hold locks against, the next test's data.
	if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", name); err != nil {
		return fmt.Errorf("end sessions of pooled database %s: %w", name, err)
	}
	dsn, err := withDatabase(base, name)
	if err != nil {
		return err
	}
	fresh := false
	if recorded != nil {
		if fresh, err = emptyDatabase(ctx, dsn, *recorded); err != nil {
			return fmt.Errorf("empty pooled database %s: %w", name, err)
		}
	}
	if fresh {
		return nil
	}
	if err := dropDatabase(ctx, admin, name); err != nil {
		return fmt.Errorf("drop changed pooled database %s: %w", name, err)
	}
	return copyPooled(ctx, base, admin, name, tmpl)
}

// copyPooled creates database name from tmpl and records its schema's
// fingerprint as the database's comment.
func copyPooled(ctx context.Context, base string, admin *pgx.Conn, name, tmpl string) error {
	if err := createFromTemplate(ctx, base, name, tmpl); err != nil {
		return err
	}
	dsn, err := withDatabase(base, name)
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connect to pooled database %s: %w", name, err)
	}
	defer conn.Close(context.Background())
	fp, err := schemaFingerprint(ctx, conn)
	if err != nil {
		return err
	}
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := admin.Exec(ctx, "COMMENT ON DATABASE "+ident+" IS "+quoteLiteral(fp)); err != nil {
		return fmt.Errorf("record the schema of pooled database %s: %w", name, err)
	}
	return nil
}

// schemaFingerprint summarises the objects outside the system schemas:
// every relation with its kind and columns, and every function. A test
// that changed the schema changes it.
func schemaFingerprint(ctx context.Context, conn *pgx.Conn) (string, error) {
	var fp string
	err := conn.QueryRow(ctx, `
		SELECT md5(coalesce(string_agg(o, ',' ORDER BY o), ''))
		FROM (
			SELECT n.nspname || '.' || c.relname || ':' || c.relkind::text || ':' ||
			       coalesce((SELECT string_agg(a.attname || ' ' || a.atttypid::regtype::text, ';' ORDER BY a.attnum)
			                 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') AS o
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_%'
			UNION ALL
			SELECT 'fn ' || n.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')'
			FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
			WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_%'
		) objects`).Scan(&fp)
	if err != nil {
		return "", fmt.Errorf("fingerprint the schema: %w", err)
	}
	return fp, nil
}

// emptyDatabase removes every row a test left in the database dsn names
// (the migrations' own version table excepted) and restarts its
// sequences, provided its schema still has fingerprint want. It reports
// whether the database is now as the template left it.
func emptyDatabase(ctx context.Context, dsn, want string) (bool, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.Background())
	if fp, err := schemaFingerprint(ctx, conn); err != nil || fp != want {
		return false, err
	}
	var tables, sequences []string
	rows, err := conn.Query(ctx, `
		SELECT format('%I.%I', schemaname, tablename) FROM pg_tables
		WHERE schemaname = 'public' AND tablename <> 'goose_db_version'`)
	if err != nil {
		return false, fmt.Errorf("list tables: %w", err)
	}
	if tables, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return false, fmt.Errorf("list tables: %w", err)
	}
	rows, err = conn.Query(ctx, `
		SELECT format('%I.%I', schemaname, sequencename) FROM pg_sequences
		WHERE schemaname = 'public' AND last_value IS NOT NULL AND sequencename NOT LIKE 'goose\_db\_version%'`)
	if err != nil {
		return false, fmt.Errorf("list sequences: %w", err)
	}
	if sequences, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return false, fmt.Errorf("list sequences: %w", err)
	}
	if len(tables) == 0 {
		return true, nil
	}
	// Which tables hold rows, in one round trip: most tests touch a few.
	probe := make([]string, len(tables))
	for i, tbl := range tables {
		probe[i] = fmt.Sprintf("SELECT %s WHERE EXISTS (SELECT 1 FROM %s)", quoteLiteral(tbl), tbl)
	}
	rows, err = conn.Query(ctx, strings.Join(probe, " UNION ALL "))
	if err != nil {
		return false, fmt.Errorf("find tables with rows: %w", err)
	}
	used, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return false, fmt.Errorf("find tables with rows: %w", err)
	}
	var b strings.Builder
	// DELETE rather than TRUNCATE: a test writes a few rows, and deleting
	// them takes about a millisecond where TRUNCATE gives every table and
	// index (cascades included) a new file and waits 80-500 ms for it.
	// Every foreign key cascades or sets NULL, so the order of the deletes
	// does not matter. A test of query plans analyses the tables first.
	for _, tbl := range used {
		b.WriteString("DELETE FROM " + tbl + ";")
	}
	for _, seq := range sequences {
		b.WriteString("SELECT setval(" + quoteLiteral(seq) + ", 1, false);")
	}
	if b.Len() == 0 {
		return true, nil
	}
	if _, err := conn.Exec(ctx, b.String()); err != nil {
		return false, fmt.Errorf("delete rows: %w", err)
	}
	return true, nil
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
