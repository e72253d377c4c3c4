package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

// outcomesSeed fills a migrated schema with posts findings on pull
// requests of ten repositories, three per pull request, with a reaction on
// every second post, a merge row for every post of a merged pull request
// (three in four are), and reviews with findings for a tenth of them.
const outcomesSeed = `
INSERT INTO finding_posts (host, owner, repo, number, head_sha, fingerprint, kind_key, code_hash, risk_type, severity,
                           file, line_start, line_end, claim, model, prompt_version, github_review_id, github_comment_id,
                           posted_at)
SELECT 'github.com', 'acme', 'repo' || (i % 10), i / 3, 'h' || (i / 3), md5(i::text), md5((i % 97)::text), md5(i::text),
       (ARRAY['robustness','concurrency','authorization','intent','lifecycle','static'])[1 + i % 6],
       (ARRAY['high','medium','low'])[1 + i % 3], 'f' || (i % 50) || '.go', 1 + i % 300, 1 + i % 300, 'claim ' || i,
       'm' || (i % 2), 'v' || (i % 3), i / 3, i, now() - (i % 90) * interval '1 day'
FROM generate_series(1, $1::int) i;
INSERT INTO finding_feedback (post_id, source, kind, external_id, author, content, signal, trusted)
SELECT id, 'sync', 'reaction', id::text, 'dev', CASE WHEN id % 4 = 0 THEN '-1' ELSE '+1' END,
       CASE WHEN id % 4 = 0 THEN 'dismiss' ELSE 'acknowledge' END, true
FROM finding_posts WHERE id % 2 = 0;
INSERT INTO pull_request_fates (host, owner, repo, number, state, head_sha, closed_at)
SELECT DISTINCT host, owner, repo, number, 'merged', 'm', now() FROM finding_posts WHERE number % 4 <> 3;
INSERT INTO finding_feedback (post_id, source, kind, external_id, content, signal, trusted)
SELECT p.id, 'sync', 'merge', 'm', '', CASE WHEN p.id % 3 = 0 THEN 'code_changed' ELSE 'code_unchanged' END, true
FROM finding_posts p JOIN pull_request_fates f USING (host, owner, repo, number);
ANALYZE finding_posts; ANALYZE finding_feedback; ANALYZE pull_request_fates;
`

// BenchmarkQuality times `reviewfleet quality` (all repositories, 90
// days) over N posted findings.
func BenchmarkQuality(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ctx := context.Background()
			dsn := testenv.IsolatedSchema(b)
			st, err := store.Open(ctx, dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			if _, err := st.Migrate(ctx); err != nil {
				b.Fatal(err)
			}
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close(ctx)
			seed := strings.ReplaceAll(outcomesSeed, "$1::int", fmt.Sprint(n))
			if _, err := conn.Exec(ctx, seed); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				rows, err := st.Quality(ctx, "", time.Now().Add(-90*24*time.Hour))
				if err != nil || len(rows) == 0 {
					b.Fatalf("quality: %v %d", err, len(rows))
				}
			}
		})
	}
}
