package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reviewfleet/reviewfleet/internal/console"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

func benchInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// seedFleetScale fills a database as a fleet's would look after months:
// reviews spread over 200 repositories and 20 batches, each with a pull
// request, five stages of items, ten files, a stored report, and
// findingsPer findings (a quarter of them active, each active one with a
// verify verdict), and model calls. Everything is generated in the
// database (generate_series), so seeding a million findings takes
// minutes, not hours.
func seedFleetScale(b *testing.B, pool *pgxpool.Pool, reviews, findingsPer int) {
	b.Helper()
	ctx := context.Background()
	stmts := []string{
		`INSERT INTO batches (id, name, source, status, labels, entries, submitted, created_at)
		 SELECT md5('b' || g)::uuid, 'nightly ' || g, 'schedule:nightly', 'submitted', jsonb_build_object('team', 'team' || (g % 4)),
		        $1 / 20, $1 / 20, now() - make_interval(days => 30 - g)
		 FROM generate_series(0, 19) g`,
		`INSERT INTO reviews (id, batch_id, repo, source, base_ref, head_ref, base_sha, head_sha, status, stage, kind, error,
		                      llm_calls, tokens_in, tokens_out, cost, created_at, started_at, finished_at, deadline_at, change_key)
		 SELECT md5('r' || i)::uuid, md5('b' || (i % 20))::uuid, 'https://github.com/acme/repo' || (i % 200) || '.git', 'git',
		        'main', 'pr-' || i, md5('base' || i), md5('head' || i),
		        CASE WHEN i % 50 = 0 THEN 'failed' ELSE 'done' END, CASE WHEN i % 50 = 0 THEN 'expert' ELSE 'done' END, 'bulk',
		        CASE WHEN i % 50 = 0 THEN 'expert: every item failed' ELSE '' END,
		        40, 120000, 4000, 0.12, t, t + interval '5 seconds', t + interval '3 minutes', t + interval '30 minutes',
		        'pr:github.com/acme/repo' || (i % 200) || '#' || ((i / 200) % 25)
		 FROM generate_series(0, $1 - 1) i, LATERAL (SELECT now() - make_interval(mins => 4 * i) AS t) x`,
		`INSERT INTO batch_reviews (batch_id, line, repo, base_ref, head_ref, labels, review_id)
		 SELECT md5('b' || (i % 20))::uuid, i / 20 + 1, 'https://github.com/acme/repo' || (i % 200) || '.git', 'main', 'pr-' || i,
		        jsonb_build_object('team', 'team' || (i % 4)), md5('r' || i)::uuid
		 FROM generate_series(0, $1 - 1) i`,
		`INSERT INTO review_pull_requests (review_id, host, owner, repo, number, head_sha)
		 SELECT md5('r' || i)::uuid, 'github.com', 'acme', 'repo' || (i % 200), (i / 200) % 25, md5('head' || i)
		 FROM generate_series(0, $1 - 1) i`,
		`INSERT INTO stage_items (review_id, stage, item_key, status, error, started_at, finished_at, queued_at)
		 SELECT r.id, s, s || ':1', CASE WHEN s = 'expert' AND r.status = 'failed' THEN 'failed' ELSE 'done' END,
		        CASE WHEN s = 'expert' AND r.status = 'failed' THEN 'the model refused' ELSE '' END,
		        r.started_at, r.finished_at, r.started_at
		 FROM reviews r, unnest(ARRAY['intent', 'verify', 'expert', 'eval', 'report']) s`,
		`INSERT INTO review_files (review_id, path, change, additions, content)
		 SELECT r.id, 'src/pkg' || k || '/file' || k || '.go', 'modified', 40,
		        (SELECT string_agg('line ' || n || ' of the file', E'\n') FROM generate_series(1, 200) n)
		 FROM reviews r, generate_series(0, 9) k`,
		`INSERT INTO findings (review_id, origin, ordinal, risk_type, file, line_start, line_end, description, severity,
		                       confidence_initial, confidence, status, drop_reason)
		 SELECT r.id, 'intent:' || (k % 10), k,
		        (ARRAY['robustness', 'concurrency', 'security', 'intent', 'performance', 'authorization'])[1 + k % 6],
		        'src/pkg' || (k % 10) || '/file' || (k % 10) || '.go', 10 + k, 12 + k,
		        'finding ' || k || ': ' || (ARRAY['the lock is held across a call', 'a nil map is written', 'the sum may overflow',
		            'the file handle leaks', 'two goroutines race on the counter'])[1 + k % 5] || ' in review ' || left(r.id::text, 8),
		        (ARRAY['critical', 'high', 'medium', 'low', 'info'])[1 + k % 5], 0.7, 0.8,
		        CASE WHEN k % 4 = 0 THEN 'active' ELSE 'dropped' END, CASE WHEN k % 4 = 0 THEN '' ELSE 'far_from_change' END
		 FROM reviews r, generate_series(0, $1 - 1) k ORDER BY r.created_at, k`, // ids grow with time, as a fleet's do
		`INSERT INTO verdicts (review_id, finding_id, stage, verdict, confidence_before, confidence_after, reason, evidence)
		 SELECT f.review_id, f.id, 'verify', 'anchored', 0.7, 0.8, 'the cited lines exist', '["line 12 reads the map"]'
		 FROM findings f WHERE f.status = 'active' ORDER BY f.id`,
		`INSERT INTO reports (review_id, markdown, json, sarif)
		 SELECT r.id, '# review', json_build_object('threshold', 0.6,
		        'findings', coalesce((SELECT json_agg(json_build_object('id', f.id)) FROM findings f
		                              WHERE f.review_id = r.id AND f.status = 'active' AND f.severity IN ('critical', 'high', 'medium')), '[]'),
		        'below_threshold', coalesce((SELECT json_agg(json_build_object('id', f.id, 'below_threshold_reason',
		                              json_build_object('stage', 'eval', 'kind', 'confidence', 'threshold', 0.6, 'detail', '')))
		                              FROM findings f WHERE f.review_id = r.id AND f.status = 'active' AND f.severity IN ('low', 'info')), '[]')),
		        '{}'
		 FROM reviews r WHERE r.status = 'done'`,
		`INSERT INTO llm_calls (review_id, stage, model, prompt_hash, status, tokens_in, tokens_out, latency_ms, cost, created_at)
		 SELECT r.id, (ARRAY['intent', 'verify', 'expert', 'eval'])[1 + k % 4], 'model', md5(r.id::text || k),
		        CASE WHEN k % 17 = 0 THEN 'rate_limited' ELSE 'ok' END, 3000, 100, 800, 0.003, r.started_at + make_interval(secs => k)
		 FROM reviews r, generate_series(0, 9) k`,
		`VACUUM ANALYZE`, // as autovacuum leaves a settled table: index-only scans see the visibility map
	}
	for i, q := range stmts {
		start := time.Now()
		var args []any
		if i < 4 {
			args = []any{reviews}
		} else if i == 6 {
			args = []any{findingsPer}
		}
		if _, err := pool.Exec(ctx, q, args...); err != nil {
			b.Fatalf("seed step %d: %v", i, err)
		}
		b.Logf("seed step %d: %s", i, time.Since(start).Round(time.Millisecond))
	}
}

// BenchmarkConsolePages times each page's server-side work (queries and
// rendering, no network) with REVIEWFLEET_BENCH_CONSOLE_REVIEWS reviews
// (default 10,000) of REVIEWFLEET_BENCH_CONSOLE_FINDINGS findings each
// (default 100: a million findings). See BENCHMARKS.md.
func BenchmarkConsolePages(b *testing.B) {
	reviews := benchInt("REVIEWFLEET_BENCH_CONSOLE_REVIEWS", 10000)
	per := benchInt("REVIEWFLEET_BENCH_CONSOLE_FINDINGS", 100)
	ctx := context.Background()
	// REVIEWFLEET_BENCH_CONSOLE_DSN names a migrated database to seed
	// once and keep (to look at the pages by hand, or to time them again
	// without seeding); by default a fresh database is seeded and dropped.
	dsn := os.Getenv("REVIEWFLEET_BENCH_CONSOLE_DSN")
	if dsn == "" {
		dsn = testenv.IsolatedSchema(b)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	var have int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM reviews`).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have == 0 {
		seedStart := time.Now()
		seedFleetScale(b, pool, reviews, per)
		b.Logf("seeded %d reviews and %d findings in %s", reviews, reviews*per, time.Since(seedStart).Round(time.Second))
	}
	c, err := console.New(console.Options{DB: pool, Token: viewerToken})
	if err != nil {
		b.Fatal(err)
	}
	var midAt time.Time
	var midID, repo string
	if err := pool.QueryRow(ctx, `SELECT created_at, id::text, repo FROM reviews ORDER BY created_at DESC OFFSET $1 LIMIT 1`, reviews/2).Scan(&midAt, &midID, &repo); err != nil {
		b.Fatal(err)
	}
	cur := midAt.UTC().Format(time.RFC3339Nano) + "_" + midID
	review := "" // a finished review with its findings
	if err := pool.QueryRow(ctx, `SELECT id::text FROM reviews WHERE status = 'done' ORDER BY created_at DESC LIMIT 1`).Scan(&review); err != nil {
		b.Fatal(err)
	}
	batch := ""
	if err := pool.QueryRow(ctx, `SELECT id::text FROM batches ORDER BY created_at DESC LIMIT 1`).Scan(&batch); err != nil {
		b.Fatal(err)
	}
	pages := []struct{ name, path string }{
		{"home", "/"},
		{"reviews", "/reviews"},
		{"reviews_deep_page", "/reviews?before=" + url.QueryEscape(cur)},
		{"review", "/reviews/" + review},
		{"batches", "/batches"},
		{"batch", "/batches/" + batch},
		{"batch_filtered", "/batches/" + batch + "?status=done&severity=critical&label=team%3Dteam1"},
		{"batch_deep_page", fmt.Sprintf("/batches/%s?after=%d", batch, reviews/40)},
		{"fleet", "/fleet"},
		{"repository", "/repos?repo=" + url.QueryEscape(repo)},
		{"search_text", "/search?in=text&q=overflow"},
		{"search_file", "/search?in=file&q=src%2Fpkg3%2F"},
		{"search_repo", "/search?in=repo&q=repo17"},
		{"search_pr", "/search?in=pr&q=acme%2Frepo17%2312"},
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, p.path, nil)
			req.Header.Set("Authorization", "Bearer "+viewerToken)
			var worst time.Duration
			for b.Loop() {
				rec := httptest.NewRecorder()
				start := time.Now()
				c.ServeHTTP(rec, req)
				worst = max(worst, time.Since(start))
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d\n%s", p.path, rec.Code, rec.Body.String())
				}
			}
			b.ReportMetric(float64(worst.Microseconds())/1000, "max-ms")
		})
	}
}
