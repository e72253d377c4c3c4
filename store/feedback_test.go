package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/store"
)

// feedbackSeed adds to historySeed the findings posted on acme/api#12
// ten days ago and what people did about them: #12 merged; the SQL
// injection's lines changed before the merge (resolved), the raw id was
// thumbed down (dismissed), the token check thumbed up (acknowledged),
// the last thumbed down only by someone who may not write to the
// repository (open).
const feedbackSeed = `
INSERT INTO finding_posts (id, host, owner, repo, number, head_sha, review_id, finding_id, fingerprint, risk_type,
                           severity, file, line_start, line_end, claim, model, prompt_version, github_review_id,
                           github_comment_id, posted_at) VALUES
  (1, 'github.com', 'acme', 'api', 12, 'h1', '` + seedRecent + `', NULL, 'fp1', 'sql-injection', 'high', 'db.go', 10, 12,
     'query built by concatenation', 'gpt-4o-mini', 'v1', 500, 501, now() - interval '10 days'),
  (2, 'github.com', 'acme', 'api', 12, 'h1', '` + seedRecent + `', NULL, 'fp2', 'sql-injection', 'high', 'db.go', 30, 30,
     'raw id in query', 'gpt-4o-mini', 'v1', 500, 502, now() - interval '10 days'),
  (3, 'github.com', 'acme', 'api', 12, 'h1', '` + seedRecent + `', NULL, 'fp3', 'auth', 'medium', 'auth.go', 5, 5,
     'token not checked', 'gpt-4o-mini', 'v1', 500, 503, now() - interval '10 days'),
  (4, 'github.com', 'acme', 'api', 12, 'h1', '` + seedRecent + `', NULL, 'fp4', 'auth', 'low', 'auth.go', 40, 41,
     'missing audit log', 'gpt-4o-mini', 'v1', 500, NULL, now() - interval '10 days');
SELECT setval('finding_posts_id_seq', 4);
INSERT INTO finding_feedback (post_id, source, kind, external_id, author, content, signal, trusted, created_at) VALUES
  (1, 'sync', 'merge', 'h2', '', 'merged at h2', 'code_changed', true, now() - interval '8 days'),
  (2, 'sync', 'merge', 'h2', '', 'merged at h2', 'code_unchanged', true, now() - interval '8 days'),
  (2, 'webhook', 'reaction', '9001', 'alice', '-1', 'dismiss', true, now() - interval '9 days'),
  (3, 'sync', 'merge', 'h2', '', 'merged at h2', 'code_unchanged', true, now() - interval '8 days'),
  (3, 'sync', 'reaction', '9002', 'bob', '+1', 'acknowledge', true, now() - interval '9 days'),
  (4, 'sync', 'merge', 'h2', '', 'merged at h2', 'code_unchanged', true, now() - interval '8 days'),
  (4, 'sync', 'reaction', '9003', 'mallory', '-1', 'dismiss', false, now() - interval '9 days');
INSERT INTO pull_request_fates (host, owner, repo, number, state, head_sha, closed_at) VALUES
  ('github.com', 'acme', 'api', 12, 'merged', 'h2', now() - interval '8 days');
`

// The seeded feedback ends as the seed says, read as the analyst.
func TestFindingOutcomesAsAnalyst(t *testing.T) {
	t.Parallel()
	st, conn := seededHistory(t)
	got := map[int64]string{}
	asAnalyst(t, conn, func(tx pgx.Tx) {
		rows, err := tx.Query(context.Background(), `SELECT post_id, outcome FROM finding_outcomes`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			var o string
			if err := rows.Scan(&id, &o); err != nil {
				t.Fatal(err)
			}
			got[id] = o
		}
		rows.Close()
		var rate float64
		if err := tx.QueryRow(context.Background(), `SELECT resolution_rate FROM resolution_rate WHERE risk_type = 'sql-injection'`).Scan(&rate); err != nil || rate != 0.5 {
			t.Errorf("sql-injection resolution rate %v, %v; want 0.5 (1 of 2 on the merged pull request)", rate, err)
		}
	})
	want := map[int64]string{1: "resolved", 2: "dismissed", 3: "acknowledged", 4: "open"}
	for id, o := range want {
		if got[id] != o {
			t.Errorf("post %d: %q, want %q", id, got[id], o)
		}
	}
	rows, err := st.Quality(context.Background(), "acme/api", time.Now().Add(-30*24*time.Hour))
	if err != nil || len(rows) != 3 {
		t.Fatalf("quality %+v, %v; want auth, sql-injection and the total", rows, err)
	}
	if total := rows[2]; total.Posted != 4 || total.Resolved != 1 || total.OnMerged != 4 || total.ResolutionRate() != 0.25 {
		t.Errorf("quality total %+v, want 1 of 4 resolved", total)
	}
	if rows, _ := st.Quality(context.Background(), "acme/api", time.Now().Add(-24*time.Hour)); len(rows) != 0 {
		t.Errorf("quality of the last day: %+v, want nothing (posted ten days ago)", rows)
	}
	if n, err := st.OutcomeCounts(context.Background()); err != nil || n["dismissed"] != 1 || n["open"] != 1 {
		t.Errorf("outcome counts %v, %v", n, err)
	}
}

// MatchRepository takes OWNER/REPO or HOST/OWNER/REPO, any case.
func TestMatchRepository(t *testing.T) {
	r := store.Repository{Host: "github.com", Owner: "Acme", Repo: "API"}
	for f, want := range map[string]bool{"": true, "acme/api": true, "github.com/acme/api": true, "acme/web": false, "ghe.example/acme/api": false, "/acme/api/": true} {
		if got := store.MatchRepository(r, f); got != want {
			t.Errorf("MatchRepository(%q) = %v, want %v", f, got, want)
		}
	}
}
