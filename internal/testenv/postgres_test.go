package testenv

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestEmptySchemaSeparatesTables(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var firstSchema string
	t.Run("schemas", func(t *testing.T) {
		a := connect(ctx, t, EmptySchema(t))
		b := connect(ctx, t, EmptySchema(t))

		firstSchema = currentSchema(ctx, t, a)
		if other := currentSchema(ctx, t, b); other == firstSchema || !strings.HasPrefix(other, "test_") {
			t.Fatalf("schemas %q and %q: want two distinct test_ schemas", firstSchema, other)
		}
		if _, err := a.Exec(ctx, "CREATE TABLE widgets (id int); INSERT INTO widgets VALUES (1)"); err != nil {
			t.Fatalf("create table in first schema: %v", err)
		}
		if !tableVisible(ctx, t, a, "widgets") {
			t.Error("table not visible in the schema that created it")
		}
		if tableVisible(ctx, t, b, "widgets") {
			t.Error("table created in one schema is visible in another")
		}
		// The same unqualified name can exist independently in the other schema.
		if _, err := b.Exec(ctx, "CREATE TABLE widgets (id int)"); err != nil {
			t.Fatalf("create same-named table in second schema: %v", err)
		}
		var n int
		if err := b.QueryRow(ctx, "SELECT count(*) FROM widgets").Scan(&n); err != nil || n != 0 {
			t.Errorf("second schema's widgets has %d rows (%v), want 0", n, err)
		}
	})

	// The subtest's cleanup has dropped its schemas.
	conn := connect(ctx, t, PostgresDSN(t))
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", firstSchema).Scan(&exists); err != nil {
		t.Fatalf("look up schema: %v", err)
	}
	if exists {
		t.Errorf("schema %s still exists after its test ended", firstSchema)
	}
}

func connect(ctx context.Context, t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func currentSchema(ctx context.Context, t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	var s string
	if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&s); err != nil {
		t.Fatalf("current_schema: %v", err)
	}
	return s
}

func tableVisible(ctx context.Context, t *testing.T, conn *pgx.Conn, name string) bool {
	t.Helper()
	var visible bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", name).Scan(&visible); err != nil {
		t.Fatalf("to_regclass: %v", err)
	}
	return visible
}

func TestWithSearchPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"postgres://u@h:5432/db?sslmode=disable", "postgres://u@h:5432/db?search_path=s1&sslmode=disable"},
		{"postgresql://u@h/db", "postgresql://u@h/db?search_path=s1"},
		{"host=h user=u dbname=db", "host=h user=u dbname=db search_path=s1"},
	}
	for _, tt := range tests {
		got, err := withSearchPath(tt.in, "s1")
		if err != nil || got != tt.want {
			t.Errorf("withSearchPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
		if _, err := pgx.ParseConfig(got); err != nil {
			t.Errorf("pgx cannot parse %q: %v", got, err)
		}
	}
}

func TestResolvePostgresExplicitMustAnswer(t *testing.T) {
	t.Parallel()
	dsn := "postgres://postgres@127.0.0.1:" + strconv.Itoa(closedPort(t)) + "/x?sslmode=disable&connect_timeout=2"
	_, err := resolvePostgres(context.Background(), dsn, DefaultPostgresDSN)
	if err == nil || !strings.Contains(err.Error(), "TEST_DATABASE_URL is set") {
		t.Fatalf("err = %v, want a complaint about TEST_DATABASE_URL", err)
	}
}

// TestResolvePostgresStartsEphemeralCluster covers a machine with no server
// at the default address.
func TestResolvePostgresStartsEphemeralCluster(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	unreachable := "postgres://postgres@127.0.0.1:" + strconv.Itoa(closedPort(t)) + "/x?sslmode=disable&connect_timeout=2"
	env, err := resolvePostgres(ctx, "", unreachable)
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	if env.local == nil || env.dsn == unreachable {
		t.Fatalf("no ephemeral cluster started: %+v", env)
	}
	if err := ping(ctx, env.dsn); err != nil {
		t.Errorf("ephemeral cluster does not answer: %v", err)
	}
	// Test databases come from a template there too.
	fsys := fstest.MapFS{"00001_gadgets.sql": {Data: []byte("-- +goose Up\nCREATE TABLE gadgets (id int);\n")}}
	if err := ensureTemplate(ctx, env.dsn, templatePrefix+"ephemeral", fsys); err != nil {
		t.Errorf("template on the ephemeral cluster: %v", err)
	} else if err := createFromTemplate(ctx, connect(ctx, t, env.dsn), "test_copy", templatePrefix+"ephemeral"); err != nil {
		t.Errorf("copy the template on the ephemeral cluster: %v", err)
	}
	if err := env.close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := ping(ctx, env.dsn); err == nil {
		t.Error("ephemeral cluster still answers after close")
	}
}

// closedPort returns a loopback port with nothing listening on it.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}
