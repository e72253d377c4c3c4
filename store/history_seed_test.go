package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

// Seeded review IDs: two old finished reviews, an old one still running,
// and a recent one.
const (
	seedOldDone    = "00000000-0000-0000-0000-0000000000a1"
	seedOldFailed  = "00000000-0000-0000-0000-0000000000a2"
	seedOldRunning = "00000000-0000-0000-0000-0000000000a3"
	seedRecent     = "00000000-0000-0000-0000-0000000000a4"
	seedOldBatch   = "00000000-0000-0000-0000-0000000000b1"
)

// historySeed fills a migrated schema with a small, known history: 10
// findings over four reviews in two repositories and three months, with
// verdicts of every stage, stored calls, items, expert runs and reports.
const historySeed = `
INSERT INTO batches (id, name, created_at, status) VALUES
  ('` + seedOldBatch + `', 'old batch', now() - interval '200 days', 'submitted');

INSERT INTO reviews (id, batch_id, repo, source, status, stage, kind, created_at, started_at, finished_at,
                     deadline_at, llm_calls, tokens_in, tokens_out, cost) VALUES
  ('` + seedOldDone + `', '` + seedOldBatch + `', 'github.com/acme/api', 'git', 'done', 'done', 'bulk',
     now() - interval '200 days', now() - interval '200 days', now() - interval '200 days' + interval '90 seconds',
     now(), 6, 6000, 600, 0.25),
  ('` + seedOldFailed + `', NULL, 'github.com/acme/web', 'git', 'failed', 'expert', 'interactive',
     now() - interval '120 days', now() - interval '120 days', now() - interval '120 days' + interval '30 seconds',
     now(), 2, 2000, 100, 0.05),
  ('` + seedOldRunning + `', NULL, 'github.com/acme/api', 'git', 'running', 'expert', 'interactive',
     now() - interval '150 days', now() - interval '150 days', NULL, now() + interval '1 hour', 1, 1000, 10, 0.01),
  ('` + seedRecent + `', NULL, 'github.com/acme/api', 'diff', 'done', 'done', 'interactive',
     now() - interval '10 days', now() - interval '10 days', now() - interval '10 days' + interval '40 seconds',
     now(), 3, 3000, 300, 0.10);

INSERT INTO batch_reviews (batch_id, line, repo, review_id) VALUES ('` + seedOldBatch + `', 1, 'github.com/acme/api', '` + seedOldDone + `');

INSERT INTO review_files (review_id, path, change, content) VALUES
  ('` + seedOldDone + `', 'db.go', 'modified', 'package db'),
  ('` + seedOldFailed + `', 'ui.js', 'modified', 'x()'),
  ('` + seedOldRunning + `', 'db.go', 'modified', 'package db'),
  ('` + seedRecent + `', 'auth.go', 'modified', 'package auth');

INSERT INTO stage_items (review_id, stage, item_key, status, queued_at, started_at, finished_at) VALUES
  ('` + seedOldDone + `', 'intent', 'p1', 'done', now() - interval '200 days', now() - interval '200 days', now() - interval '200 days' + interval '5 seconds'),
  ('` + seedOldDone + `', 'expert', 'f1', 'done', now() - interval '200 days', now() - interval '200 days', now() - interval '200 days' + interval '60 seconds'),
  ('` + seedOldFailed + `', 'intent', 'p1', 'done', now() - interval '120 days', now() - interval '120 days', now() - interval '120 days' + interval '2 seconds'),
  ('` + seedOldRunning + `', 'intent', 'p1', 'pending', now(), now(), NULL),
  ('` + seedRecent + `', 'intent', 'p1', 'done', now() - interval '10 days', now() - interval '10 days', now() - interval '10 days' + interval '3 seconds'),
  ('` + seedRecent + `', 'expert', 'f1', 'done', now() - interval '10 days', now() - interval '10 days', now() - interval '10 days' + interval '20 seconds');

INSERT INTO findings (id, review_id, origin, ordinal, risk_type, file, line_start, line_end, description,
                      severity, confidence_initial, confidence, status, merged_into) VALUES
  (1, '` + seedOldDone + `', 'p1', 1, 'sql-injection', 'db.go', 10, 12, 'query built by concatenation', 'high', 0.9, 0.95, 'active', NULL),
  (2, '` + seedOldDone + `', 'p1', 2, 'sql-injection', 'db.go', 30, 30, 'raw id in query', 'high', 0.8, 0.1, 'dropped', NULL),
  (3, '` + seedOldDone + `', 'p1', 3, 'sql-injection', 'db.go', 10, 11, 'same as 1', 'high', 0.8, 0.8, 'merged', 1),
  (4, '` + seedOldDone + `', 'p1', 4, 'null-deref', 'db.go', 50, 50, 'nil row', 'medium', 0.6, 0.2, 'dropped', NULL),
  (5, '` + seedOldFailed + `', 'p1', 1, 'xss', 'ui.js', 5, 5, 'unescaped html', 'high', 0.7, 0.1, 'dropped', NULL),
  (6, '` + seedOldFailed + `', 'p1', 2, 'sql-injection', 'ui.js', 9, 9, 'query in client', 'low', 0.5, 0.1, 'dropped', NULL),
  (7, '` + seedOldRunning + `', 'p1', 1, 'null-deref', 'db.go', 70, 70, 'nil map', 'low', 0.5, 0.5, 'active', NULL),
  (8, '` + seedRecent + `', 'p1', 1, 'auth-bypass', 'auth.go', 3, 8, 'token not checked', 'critical', 0.9, 0.9, 'active', NULL),
  (9, '` + seedRecent + `', 'p1', 2, 'sql-injection', 'auth.go', 20, 20, 'format string query', 'high', 0.6, 0.2, 'dropped', NULL),
  (10, '` + seedRecent + `', 'p1', 3, 'null-deref', 'auth.go', 40, 40, 'nil user', 'medium', 0.7, 0.75, 'active', NULL);
SELECT setval(pg_get_serial_sequence('findings', 'id'), 100);

INSERT INTO verdicts (review_id, finding_id, stage, verdict, confidence_before, confidence_after, model, latency_ms) VALUES
  ('` + seedOldDone + `', 1, 'verify', 'anchored', 0.9, 0.9, 'm', 10),
  ('` + seedOldDone + `', 1, 'expert', 'confirmed', 0.9, 0.95, 'm', 900),
  ('` + seedOldDone + `', 1, 'eval', 'confirmed', 0.95, 0.95, 'm', 100),
  ('` + seedOldDone + `', 2, 'verify', 'anchored', 0.8, 0.8, 'm', 10),
  ('` + seedOldDone + `', 2, 'expert', 'refuted', 0.8, 0.1, 'm', 800),
  ('` + seedOldDone + `', 4, 'verify', 'unanchored', 0.6, 0.2, 'm', 10),
  ('` + seedOldFailed + `', 5, 'expert', 'refuted', 0.7, 0.1, 'm', 700),
  ('` + seedOldFailed + `', 6, 'expert', 'refuted', 0.5, 0.1, 'm', 600),
  ('` + seedRecent + `', 8, 'expert', 'confirmed', 0.9, 0.9, 'm', 500),
  ('` + seedRecent + `', 8, 'eval', 'confirmed', 0.9, 0.9, 'm', 50),
  ('` + seedRecent + `', 9, 'eval', 'disputed', 0.6, 0.2, 'm', 50),
  ('` + seedRecent + `', 10, 'expert', 'inconclusive', 0.7, 0.75, 'm', 400);

INSERT INTO expert_runs (review_id, finding_id, stop_reason, rounds, phases, checks) VALUES
  ('` + seedOldDone + `', 1, 'verdict', 3, '[{"phase":"explore"}]', '[{"check":"callers"}]'),
  ('` + seedOldDone + `', 2, 'verdict', 2, '[{"phase":"explore"}]', '[]'),
  ('` + seedOldFailed + `', 5, 'verdict', 1, '[{"phase":"explore"}]', '[]'),
  ('` + seedOldRunning + `', 7, 'verdict', 1, '[{"phase":"explore"}]', '[]'),
  ('` + seedRecent + `', 8, 'verdict', 2, '[{"phase":"explore"}]', '[]');

INSERT INTO expert_tool_calls (review_id, finding_id, round, seq, tool, args, outcome, result_bytes, latency_ms) VALUES
  ('` + seedOldDone + `', 1, 1, 1, 'grep', '{"pattern":"Query\\("}', 'hit', 400, 3),
  ('` + seedOldDone + `', 1, 1, 2, 'grep', '{"pattern":"Sanitize"}', 'empty', 20, 2),
  ('` + seedOldDone + `', 1, 2, 3, 'read_file', '{"path":"db.go"}', 'hit', 900, 1),
  ('` + seedOldFailed + `', 5, 1, 1, 'list_dir', '{"path":""}', 'hit', 50, 1),
  ('` + seedRecent + `', 8, 1, 1, 'grep', '{"pattern":"checkToken"}', 'empty', 20, 2),
  ('` + seedRecent + `', 8, 1, 2, 'grep', '{"path_glob":"**/*.go","pattern":"checkToken"}', 'empty', 20, 2),
  ('` + seedRecent + `', 8, 1, 3, 'find_symbol', '{"name":"checkToken"}', 'empty', 20, 2),
  ('` + seedRecent + `', 8, 2, 4, 'read_file', '{"path":"auth.go"}', 'hit', 700, 1);

INSERT INTO llm_calls (review_id, stage, item_key, model, prompt_hash, status, tokens_in, tokens_out, latency_ms,
                       created_at) VALUES
  ('` + seedOldDone + `', 'intent', 'p1', 'm', 'h1', 'ok', 1000, 100, 300, now() - interval '200 days'),
  ('` + seedOldDone + `', 'expert', 'f1', 'm', 'h2', 'ok', 1000, 100, 900, now() - interval '200 days'),
  ('` + seedOldDone + `', 'expert', 'f1', 'm', 'h3', 'ok', 1000, 100, 800, now() - interval '200 days'),
  ('` + seedOldFailed + `', 'intent', 'p1', 'm', 'h4', 'ok', 1000, 50, 200, now() - interval '120 days'),
  ('` + seedOldRunning + `', 'intent', 'p1', 'm', 'h5', 'ok', 1000, 10, 100, now() - interval '150 days'),
  ('` + seedRecent + `', 'intent', 'p1', 'm', 'h6', 'ok', 1000, 100, 300, now() - interval '10 days'),
  (NULL, 'judge', '', 'm', 'h7', 'ok', 10, 1, 10, now() - interval '100 days'),
  (NULL, 'judge', '', 'm', 'h8', 'ok', 10, 1, 10, now() - interval '1 day');

-- Bodies where the schema keeps them in llm_calls itself.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = 'llm_calls' AND column_name = 'request') THEN
    EXECUTE $q$UPDATE llm_calls SET request = '{"prompt":"SECRET PROMPT"}', response = '{"reply":"r"}'$q$;
  END IF;
END
$$;

INSERT INTO reports (review_id, markdown, json, sarif) VALUES
  ('` + seedOldDone + `', '# report', '{}', '{}'),
  ('` + seedOldFailed + `', '# report', '{}', '{}'),
  ('` + seedRecent + `', '# report', '{}', '{}');

INSERT INTO eval_summaries (review_id, risk_type, confirmed) VALUES ('` + seedOldDone + `', 'sql-injection', 1);
`

// seededHistory returns a migrated store holding historySeed and a
// connection to the same schema (as the superuser the tests run as).
func seededHistory(t *testing.T) (*store.Store, *pgx.Conn) {
	t.Helper()
	st, conn := migratedWithConn(t)
	if _, err := conn.Exec(context.Background(), historySeed+feedbackSeed); err != nil {
		t.Fatalf("seed history: %v", err)
	}
	return st, conn
}

// migratedWithConn opens a migrated isolated schema, and a plain
// connection to it for SQL the store has no method for; both close with
// the test.
func migratedWithConn(t *testing.T) (*store.Store, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	dsn := testenv.IsolatedSchema(t)
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return st, conn
}

func count(t *testing.T, conn *pgx.Conn, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := conn.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}
