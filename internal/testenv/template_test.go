package testenv

import (
	"context"
	"io/fs"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/migrations"
)

// Each test gets a database of its own, already at the newest migration.
func TestIsolatedSchemaIsMigratedAndSeparate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("migrations: %v %v", names, err)
	}
	newest := names[len(names)-1]
	a := connect(ctx, t, IsolatedSchema(t))
	b := connect(ctx, t, IsolatedSchema(t))
	first := currentDatabase(ctx, t, a)
	if other := currentDatabase(ctx, t, b); other == first || !strings.HasPrefix(other, poolPrefix) {
		t.Fatalf("databases %q and %q: want two distinct %s databases", first, other, poolPrefix)
	}
	var version int64
	if err := a.QueryRow(ctx, "SELECT max(version_id) FROM goose_db_version").Scan(&version); err != nil {
		t.Fatalf("read schema version: %v", err)
	}
	if want := strings.TrimLeft(strings.SplitN(newest, "_", 2)[0], "0"); want != strconv.FormatInt(version, 10) {
		t.Errorf("schema version %d, want %s (%s)", version, want, newest)
	}
	if _, err := a.Exec(ctx, "CREATE TABLE widgets (id int)"); err != nil {
		t.Fatalf("create table: %v", err)
	}
	if tableVisible(ctx, t, b, "widgets") {
		t.Error("table created in one test database is visible in another")
	}
	if !tableVisible(ctx, t, b, "reviews") {
		t.Error("migrated table reviews missing")
	}
}

// A pooled database is handed to the next test as the template left it:
// the rows a test wrote are gone, sequences start again, a session the test
// left open is ended, and a schema the test changed is copied afresh.
func TestPooledDatabaseIsEmptiedForTheNextTest(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := PostgresDSN(t)
	tmpl, err := migratedTemplate(ctx, base)
	if err != nil {
		t.Skipf("no template databases here: %v", err)
	}
	db, err := acquirePooled(ctx, base, tmpl, strings.TrimPrefix(tmpl, templatePrefix))
	if err != nil {
		t.Fatal(err)
	}
	defer db.release()
	dsn, err := withDatabase(base, db.name)
	if err != nil {
		t.Fatal(err)
	}
	left := connect(ctx, t, dsn)
	if _, err := left.Exec(ctx, "INSERT INTO feedback_cursors (host, owner, repo) VALUES ('h', 'o', 'r'); SELECT nextval('findings_id_seq')"); err != nil {
		t.Fatal(err)
	}
	if err := db.client.prepare(ctx, db.slot, db.name, tmpl); err != nil {
		t.Fatalf("prepare after rows: %v", err)
	}
	if err := left.Ping(ctx); err == nil {
		t.Error("a session the last test left open still works")
	}
	next := connect(ctx, t, dsn)
	var rows, id int64
	if err := next.QueryRow(ctx, "SELECT (SELECT count(*) FROM feedback_cursors), nextval('findings_id_seq')").Scan(&rows, &id); err != nil {
		t.Fatal(err)
	}
	if rows != 0 || id != 1 {
		t.Errorf("after emptying: %d rows left, next id %d; want 0 and 1", rows, id)
	}
	if _, err := next.Exec(ctx, "CREATE TABLE widgets (id int); ALTER TABLE feedback_cursors DROP COLUMN passes"); err != nil {
		t.Fatal(err)
	}
	if err := db.client.prepare(ctx, db.slot, db.name, tmpl); err != nil {
		t.Fatalf("prepare after a schema change: %v", err)
	}
	fresh := connect(ctx, t, dsn)
	if tableVisible(ctx, t, fresh, "widgets") {
		t.Error("a table the last test created is still there")
	}
	var hasError bool
	if err := fresh.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_name = 'feedback_cursors' AND column_name = 'passes')").Scan(&hasError); err != nil || !hasError {
		t.Errorf("a column the last test dropped is still missing (%v)", err)
	}

	// The process empties the database through the session it kept, and
	// opens a new one when another process holding the slot since has
	// ended it.
	kept := db.client.slotConn(db.slot)
	if kept == nil {
		t.Fatal("no session to the pooled database was kept")
	}
	pid := kept.PgConn().PID()
	if err := db.client.prepare(ctx, db.slot, db.name, tmpl); err != nil {
		t.Fatalf("prepare again: %v", err)
	}
	if again := db.client.slotConn(db.slot); again == nil || again.PgConn().PID() != pid {
		t.Error("preparing again did not reuse the kept session")
	}
	if _, err := connect(ctx, t, base).Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", db.name); err != nil {
		t.Fatal(err)
	}
	if err := db.client.prepare(ctx, db.slot, db.name, tmpl); err != nil {
		t.Fatalf("prepare after the kept session was ended: %v", err)
	}
	if again := db.client.slotConn(db.slot); again == nil || again.PgConn().PID() == pid {
		t.Error("the ended session is still the kept one")
	}
}

// A template being built holds up only the processes that need that
// template: a finished one is found without the lock, and another
// template's build (a test's own, dropped and rebuilt) does not take it.
func TestEnsureTemplateWaitsOnlyForItsOwnBuild(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := PostgresDSN(t)
	real, err := migratedTemplate(ctx, base)
	if err != nil {
		t.Skipf("no template on this server: %v", err)
	}
	holder := connect(ctx, t, base)
	other := templatePrefix + "selftest_" + randomHex(t, 4)
	for _, name := range []string{real, other} {
		if _, err := holder.Exec(ctx, "SELECT pg_advisory_lock($1)", templateLock(name)); err != nil {
			t.Fatal(err)
		}
	}
	quick, cancelQuick := context.WithTimeout(ctx, 5*time.Second)
	defer cancelQuick()
	if err := ensureTemplate(quick, base, real, migrations.FS); err != nil {
		t.Fatalf("ensure the finished template while builds hold the locks: %v", err)
	}
	if templateLock(real) == templateLock(other) {
		t.Fatal("two templates share a build lock")
	}
}

// A template a killed process left half built is rebuilt, and processes
// asking for the template at once all get a finished one.
func TestEnsureTemplateRebuildsUnfinished(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := PostgresDSN(t)
	conn := connect(ctx, t, base)
	name := templatePrefix + "selftest_" + randomHex(t, 4)
	t.Cleanup(func() {
		if err := dropDatabase(context.Background(), conn, name); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	fsys := fstest.MapFS{
		"00001_gadgets.sql": {Data: []byte("-- +goose Up\nCREATE TABLE gadgets (id int);\n-- +goose Down\nDROP TABLE gadgets;\n")},
	}
	// Unfinished: created, never migrated nor marked.
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ensureTemplate(ctx, base, name, fsys)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("ensureTemplate: %v", err)
		}
	}
	var isTemplate, allowConn bool
	if err := conn.QueryRow(ctx, "SELECT datistemplate, datallowconn FROM pg_database WHERE datname = $1", name).Scan(&isTemplate, &allowConn); err != nil {
		t.Fatal(err)
	}
	if !isTemplate || allowConn {
		t.Fatalf("template marks: is_template %v, allow_connections %v", isTemplate, allowConn)
	}
	copyName := "test_" + randomHex(t, 8)
	if err := createFromTemplate(ctx, conn, copyName, name); err != nil {
		t.Fatalf("copy template: %v", err)
	}
	t.Cleanup(func() { _ = dropDatabase(context.Background(), conn, copyName) })
	dsn, err := withDatabase(base, copyName)
	if err != nil {
		t.Fatal(err)
	}
	if !tableVisible(ctx, t, connect(ctx, t, dsn), "gadgets") {
		t.Error("copy of the rebuilt template lacks the migrated table")
	}
}

func TestMigrationsDigestFollowsContent(t *testing.T) {
	t.Parallel()
	a := fstest.MapFS{"00001_a.sql": {Data: []byte("x")}}
	b := fstest.MapFS{"00001_a.sql": {Data: []byte("y")}}
	c := fstest.MapFS{"00002_a.sql": {Data: []byte("x")}}
	da, _ := migrationsDigest(a)
	db, _ := migrationsDigest(b)
	dc, _ := migrationsDigest(c)
	if da == db || da == dc || len(da) < 16 {
		t.Errorf("digests %q %q %q: want distinct", da, db, dc)
	}
}

func TestWithDatabase(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"postgres://u@h:5432/test?sslmode=disable", "postgres://u@h:5432/db1?sslmode=disable"},
		{"postgresql://u@h", "postgresql://u@h/db1"},
		{"host=h user=u dbname=test", "host=h user=u dbname=test dbname=db1"},
	}
	for _, tt := range tests {
		got, err := withDatabase(tt.in, "db1")
		if err != nil || got != tt.want {
			t.Errorf("withDatabase(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
		cfg, err := pgx.ParseConfig(got)
		if err != nil {
			t.Errorf("pgx cannot parse %q: %v", got, err)
		} else if cfg.Database != "db1" {
			t.Errorf("pgx reads %q as database %q, want db1", got, cfg.Database)
		}
	}
}

func currentDatabase(ctx context.Context, t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	var s string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&s); err != nil {
		t.Fatalf("current_database: %v", err)
	}
	return s
}

// A role that may not create databases still gets an isolated, migrated
// schema.
func TestIsolatedSchemaWithoutCreateDB(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := PostgresDSN(t)
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Skip("needs a URL DSN to log in as another role")
	}
	admin := connect(ctx, t, base)
	role := "rf_test_nocreatedb_" + randomHex(t, 4)
	var db string
	if err := admin.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	ident, dbIdent := pgx.Identifier{role}.Sanitize(), pgx.Identifier{db}.Sanitize()
	if _, err := admin.Exec(ctx, "CREATE ROLE "+ident+" LOGIN NOCREATEDB; GRANT CREATE ON DATABASE "+dbIdent+" TO "+ident); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(context.Background(), "DROP OWNED BY "+ident+"; DROP ROLE "+ident); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	u.User = url.User(role)
	limited := u.String()
	if err := ping(ctx, limited); err != nil {
		t.Skipf("cannot log in as a new role here: %v", err)
	}
	t.Run("fallback", func(t *testing.T) {
		conn := connect(ctx, t, isolatedOn(t, limited))
		if s := currentSchema(ctx, t, conn); !strings.HasPrefix(s, "test_") {
			t.Errorf("current schema %q, want a test_ schema of its own", s)
		}
		if !tableVisible(ctx, t, conn, "reviews") {
			t.Error("migrated table reviews missing")
		}
	})
}
