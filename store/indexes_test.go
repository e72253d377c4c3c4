package store_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// foreignKey is a single-column foreign key of the schema.
type foreignKey struct {
	table, column, typ string
}

func foreignKeys(t *testing.T, conn *pgx.Conn) []foreignKey {
	t.Helper()
	rows, err := conn.Query(context.Background(), `
		SELECT c.conrelid::regclass::text, a.attname, format_type(a.atttypid, a.atttypmod)
		FROM pg_constraint c
		JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
		WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace
		  AND cardinality(c.conkey) = 1
		ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []foreignKey
	for rows.Next() {
		var fk foreignKey
		if err := rows.Scan(&fk.table, &fk.column, &fk.typ); err != nil {
			t.Fatal(err)
		}
		out = append(out, fk)
	}
	return out
}

// Every foreign key has an index leading with its columns (a partial one
// only when it leaves out NULLs, which the key's checks never look up):
// without it, deleting a referenced row scans the referencing table.
func TestEveryForeignKeyHasALeadingIndex(t *testing.T) {
	t.Parallel()
	_, conn := seededHistory(t)
	rows, err := conn.Query(context.Background(), `
		SELECT c.conrelid::regclass::text, c.conname
		FROM pg_constraint c
		WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace
		  AND NOT EXISTS (
		    SELECT 1 FROM pg_index i
		    WHERE i.indrelid = c.conrelid
		      AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] @> c.conkey
		      AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] <@ c.conkey
		      AND (i.indpred IS NULL OR pg_get_expr(i.indpred, i.indrelid) ~ '^\(\w+ IS NOT NULL\)$'))
		ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, name string
		if err := rows.Scan(&table, &name); err != nil {
			t.Fatal(err)
		}
		t.Errorf("foreign key %s of %s has no index leading with its columns", name, table)
	}
	if len(foreignKeys(t, conn)) < 10 {
		t.Error("the catalog query found too few foreign keys: is it looking at the right schema?")
	}
}

// Deleting a review runs, for each foreign key, a look-up of the referencing
// rows (the cascades and SET NULLs); each must be an index scan. The plans
// are the generic ones the foreign-key triggers cache, with sequential scans
// made as unattractive as the planner allows, so a plan still scanning the
// table means no index serves it.
func TestDeleteReviewPathUsesIndexes(t *testing.T) {
	t.Parallel()
	_, conn := seededHistory(t)
	ctx := context.Background()
	for _, set := range []string{"SET enable_seqscan = off", "SET plan_cache_mode = force_generic_plan"} {
		if _, err := conn.Exec(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	fks := foreignKeys(t, conn)
	for i, fk := range fks {
		name := "fk_lookup_" + strconv.Itoa(i)
		stmt := "PREPARE " + name + "(" + fk.typ + ") AS SELECT 1 FROM ONLY " + fk.table +
			" x WHERE $1 OPERATOR(pg_catalog.=) x." + fk.column + " FOR KEY SHARE OF x"
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		plan := explain(t, conn, "EXPLAIN EXECUTE "+name+"(NULL)")
		if strings.Contains(plan, "Seq Scan") || !strings.Contains(plan, "Index") {
			t.Errorf("look-up of %s.%s does not use an index:\n%s", fk.table, fk.column, plan)
		}
	}
	// The delete statements prune runs, one batch each.
	for _, q := range []string{
		`DELETE FROM llm_calls WHERE id IN (SELECT id FROM llm_calls WHERE review_id = ANY('{` + seedOldDone + `}'::uuid[]) LIMIT 1000)`,
		`DELETE FROM findings WHERE id IN (SELECT id FROM findings WHERE review_id = ANY('{` + seedOldDone + `}'::uuid[]) LIMIT 1000)`,
		`DELETE FROM reviews WHERE id = ANY('{` + seedOldDone + `}'::uuid[]) AND created_at < now() AND status IN ('done', 'failed')`,
		`SELECT id FROM reviews WHERE created_at < now() - interval '90 days' AND status IN ('done', 'failed')
		   AND (created_at, id) > ('-infinity', '00000000-0000-0000-0000-000000000000') ORDER BY created_at, id LIMIT 1000`,
	} {
		plan := explain(t, conn, "EXPLAIN "+q)
		if strings.Contains(plan, "Seq Scan") {
			t.Errorf("%s\nscans a table:\n%s", q, plan)
		}
	}
}

func explain(t *testing.T, conn *pgx.Conn, sql string) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// The usual ways into the history — one review, a time window, a
// repository, a stage's verdicts — reach the rows through indexes.
func TestHistoryQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	_, conn := seededHistory(t)
	// Plans follow the statistics of the seeded rows, as a database with a
	// history has them, not whatever an earlier user of the database left.
	if _, err := conn.Exec(context.Background(), "ANALYZE; SET enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ query, index string }{
		{`SELECT * FROM review_costs WHERE created_at > now() - interval '30 days'`, "reviews_created_idx"},
		{`SELECT * FROM review_costs WHERE review_id = '` + seedRecent + `'`, "reviews_pkey"},
		{`SELECT * FROM finding_history WHERE review_id = '` + seedRecent + `'`, "findings_review_idx"},
		{`SELECT * FROM verdict_trail WHERE review_id = '` + seedRecent + `'`, "verdicts_review_idx"},
		{`SELECT * FROM stage_latency WHERE review_id = '` + seedRecent + `'`, "stage_items_pkey"},
		{`SELECT * FROM repo_risk_trend WHERE repo = 'github.com/acme/web'`, "reviews_repo_idx"},
		{`SELECT count(*) FROM verdict_trail WHERE stage = 'expert' AND verdict = 'refuted'`, "verdicts_stage_verdict_idx"},
		{`SELECT count(*) FROM finding_history WHERE reviewed_at > now() - interval '30 days'`, "reviews_created_idx"},
	} {
		plan := explain(t, conn, "EXPLAIN "+c.query)
		if strings.Contains(plan, "Seq Scan") || !strings.Contains(plan, " "+c.index+" ") {
			t.Errorf("%s\ndoes not go through %s:\n%s", c.query, c.index, plan)
		}
	}
}
