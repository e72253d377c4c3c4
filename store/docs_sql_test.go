package store_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var analystViews = []string{"finding_history", "verdict_trail", "review_costs", "stage_latency", "repo_risk_trend", "expert_tool_health",
	"finding_outcomes", "resolution_rate"}

// docQuery is one ```sql block of docs/sql.md and the heading above it.
type docQuery struct {
	heading string
	sql     string
}

func docQueries(t *testing.T) []docQuery {
	t.Helper()
	f, err := os.Open("../docs/sql.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		out     []docQuery
		heading string
		block   *strings.Builder
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case block != nil && strings.TrimSpace(line) == "```":
			out = append(out, docQuery{heading: heading, sql: block.String()})
			block = nil
		case block != nil:
			block.WriteString(line + "\n")
		case strings.TrimSpace(line) == "```sql":
			block = &strings.Builder{}
		case strings.HasPrefix(line, "#"):
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if block != nil {
		t.Fatalf("unterminated sql block under %q", heading)
	}
	return out
}

// asAnalyst runs fn in a transaction under SET LOCAL ROLE reviewfleet_analyst,
// rolled back afterwards.
func asAnalyst(t *testing.T, conn *pgx.Conn, fn func(tx pgx.Tx)) {
	t.Helper()
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SET LOCAL ROLE reviewfleet_analyst"); err != nil {
		t.Fatalf("set role: %v", err)
	}
	fn(tx)
}

// tryAsAnalyst runs one statement as the analyst (in a savepoint-free
// transaction of its own) and returns its error.
func tryAsAnalyst(t *testing.T, conn *pgx.Conn, sql string) error {
	t.Helper()
	var err error
	asAnalyst(t, conn, func(tx pgx.Tx) {
		var rows pgx.Rows
		rows, err = tx.Query(context.Background(), sql)
		if err == nil {
			for rows.Next() {
			}
			rows.Close()
			err = rows.Err()
		}
	})
	return err
}

func isPermissionDenied(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "42501"
}

// Every query docs/sql.md shows runs, as the analyst, on seeded history;
// the first ones give the answers the seed implies.
func TestDocumentedQueriesRun(t *testing.T) {
	t.Parallel()
	_, conn := seededHistory(t)
	queries := docQueries(t)
	if len(queries) < 8 {
		t.Fatalf("found %d sql blocks in docs/sql.md, want the documented questions", len(queries))
	}
	results := map[string][][]any{}
	for _, q := range queries {
		asAnalyst(t, conn, func(tx pgx.Tx) {
			rows, err := tx.Query(context.Background(), q.sql)
			if err != nil {
				t.Errorf("%s: %v\n%s", q.heading, err, q.sql)
				return
			}
			var got [][]any
			for rows.Next() {
				v, err := rows.Values()
				if err != nil {
					t.Errorf("%s: %v", q.heading, err)
				}
				got = append(got, v)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				t.Errorf("%s: %v\n%s", q.heading, err, q.sql)
				return
			}
			if len(got) == 0 {
				t.Errorf("%s: no rows on the seeded history", q.heading)
			}
			results[q.heading] = got
		})
	}
	// sql-injection: 5 findings (1, 2, 3, 6, 9), rejected 2 (expert), 6
	// (expert), 9 (eval) — the most often refuted risk type.
	if r := results["Which risk types are most often refuted?"]; len(r) > 0 {
		if r[0][0] != "sql-injection" || r[0][1] != int64(5) || r[0][2] != int64(3) || r[0][3] != int64(2) || r[0][4] != int64(1) {
			t.Errorf("most refuted risk type: %v, want sql-injection with 5 findings, 3 rejected (2 by the expert, 1 by eval)", r[0])
		}
	}
	// acme/web: 2 findings, both refuted (100%); acme/api: 8 findings, 3
	// rejected (2, 4, 9).
	if r := results["False-positive rate by repository"]; len(r) != 2 {
		t.Errorf("false-positive rate by repository: %v, want two repositories", r)
	} else {
		if r[0][0] != "github.com/acme/web" || r[0][2] != int64(2) || r[0][3] != int64(2) {
			t.Errorf("first repository: %v, want acme/web with 2 of 2 rejected", r[0])
		}
		if r[1][0] != "github.com/acme/api" || r[1][2] != int64(8) || r[1][3] != int64(3) {
			t.Errorf("second repository: %v, want acme/api with 3 of 8 rejected", r[1])
		}
	}
	// acme/api: grep 4 calls, 3 empty; find_symbol 1 call, empty; the
	// recent review's searches found nothing at all.
	if r := results["Which expert tools return nothing?"]; len(r) < 2 ||
		r[0][0] != "github.com/acme/api" || r[0][1] != "find_symbol" || r[0][2] != int64(1) || r[0][3] != int64(1) ||
		r[1][1] != "grep" || r[1][2] != int64(4) || r[1][3] != int64(3) {
		t.Errorf("tools that return nothing: %v, want find_symbol 1 of 1 then grep 3 of 4 empty in acme/api", r)
	}
	if r := results["Reviews whose expert searches found nothing"]; len(r) != 1 || uuidText(r[0][0]) != seedRecent {
		t.Errorf("reviews whose searches found nothing: %v, want only %s", r, seedRecent)
	}
	if r := results["Slowest stages"]; len(r) > 0 && r[0][0] != "expert" {
		t.Errorf("slowest stage: %v, want expert (60 s and 20 s against seconds for intent)", r[0])
	}
}

// The analyst reads every view and nothing else: not the raw prompts in
// llm_calls, not the other tables, and it cannot write anywhere.
func TestAnalystRoleReadsViewsOnly(t *testing.T) {
	t.Parallel()
	_, conn := seededHistory(t)
	for _, v := range analystViews {
		if err := tryAsAnalyst(t, conn, "SELECT * FROM "+v); err != nil {
			t.Errorf("analyst reading %s: %v", v, err)
		}
	}
	var tables []string
	rows, err := conn.Query(context.Background(), `
		SELECT c.relname FROM pg_class c
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
		ORDER BY c.relname`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	if len(tables) < 10 {
		t.Fatalf("found tables %v", tables)
	}
	for _, tbl := range tables {
		if err := tryAsAnalyst(t, conn, "SELECT * FROM "+tbl+" LIMIT 1"); !isPermissionDenied(err) {
			t.Errorf("analyst reading table %s: %v, want permission denied", tbl, err)
		}
	}
	if err := tryAsAnalyst(t, conn, "SELECT * FROM llm_calls"); !isPermissionDenied(err) {
		t.Errorf("analyst reading raw prompts: %v, want permission denied", err)
	}
	for _, stmt := range []string{
		"INSERT INTO batches (id) VALUES (gen_random_uuid())",
		"UPDATE reviews SET repo = 'x'",
		"DELETE FROM reviews",
		"DELETE FROM llm_calls",
		"TRUNCATE findings",
		"CREATE TABLE analyst_scratch (id int)",
		"CREATE VIEW analyst_prompts AS SELECT 1",
	} {
		if err := tryAsAnalyst(t, conn, stmt); !isPermissionDenied(err) {
			t.Errorf("analyst: %s: %v, want permission denied", stmt, err)
		}
	}
	// Writing through a view is refused too: these views join, so Postgres
	// cannot write through them anyway, and the role holds no privilege
	// that would let it should one become writable.
	for _, v := range analystViews {
		for _, stmt := range []string{"DELETE FROM " + v, "UPDATE " + v + " SET repo = 'x'"} {
			if err := tryAsAnalyst(t, conn, stmt); err == nil {
				t.Errorf("analyst: %s succeeded", stmt)
			}
		}
		var canWrite bool
		if err := conn.QueryRow(context.Background(),
			`SELECT has_table_privilege('reviewfleet_analyst', $1, 'INSERT, UPDATE, DELETE, TRUNCATE')`, v).Scan(&canWrite); err != nil || canWrite {
			t.Errorf("analyst has a write privilege on %s (%v)", v, err)
		}
	}
	// The views expose no prompt or reply.
	for _, v := range analystViews {
		var cols []string
		rows, err := conn.Query(context.Background(), `
			SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0`, v)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var c string
			_ = rows.Scan(&c)
			cols = append(cols, c)
		}
		rows.Close()
		for _, c := range cols {
			// prompt_version names the prompts' release, not their text.
			if c == "request" || c == "response" || (strings.Contains(c, "prompt") && c != "prompt_version") {
				t.Errorf("view %s exposes %s", v, c)
			}
		}
	}
}

// uuidText formats a uuid value as pgx returns it.
func uuidText(v any) string {
	b, ok := v.([16]byte)
	if !ok {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
