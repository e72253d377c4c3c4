package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

// fill inserts running reviews whose current stage holds n pending items
// each, plus done items, straight in SQL, and analyzes the table.
func fill(t testing.TB, ctx context.Context, dsn string, reviews, pending, done int) {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, `
		WITH r AS (
			INSERT INTO reviews (id, repo, source, status, stage, deadline_at)
			SELECT gen_random_uuid(), '/repo', 'git', 'running', 'expert', now() + interval '1 day'
			FROM generate_series(1, $1::int) RETURNING id)
		INSERT INTO stage_items (review_id, stage, item_key, status)
		SELECT r.id, 'expert', 'f' || g, CASE WHEN g <= $2::int THEN 'pending' ELSE 'done' END
		FROM r, generate_series(1, $2::int + $3::int) g`, reviews, pending, done)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `ANALYZE stage_items; ANALYZE reviews`); err != nil {
		t.Fatal(err)
	}
}

func migrated(t testing.TB, ctx context.Context) (*store.Store, string) {
	t.Helper()
	dsn := testenv.IsolatedSchema(t)
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return st, dsn
}

// The reconciler's page query must be served by stage_items_pending_idx:
// a sequential scan of the whole ledger per page is what made restoring a
// large backlog take minutes.
func TestPendingPageUsesIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, dsn := migrated(t, ctx)
	fill(t, ctx, dsn, 20, 100, 1900)
	plan, err := st.ExplainPendingPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The index must carry the keyset condition itself, not only select
	// pending rows that are then filtered and sorted.
	if !strings.Contains(plan, "on stage_items_pending_idx") ||
		!strings.Contains(plan, "Index Cond: (ROW(review_id, stage, item_key) >") {
		t.Errorf("pending page is not served by stage_items_pending_idx:\n%s", plan)
	}
}

func TestPendingPagesCoverEveryItemOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, dsn := migrated(t, ctx)
	fill(t, ctx, dsn, 3, 250, 50)
	seen := map[string]bool{}
	var cur store.PendingCursor
	pages := 0
	for {
		page, err := st.PendingPage(ctx, cur, time.Minute, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, it := range page {
			k := it.ReviewID + "/" + it.Key
			if seen[k] {
				t.Fatalf("item %s returned twice", k)
			}
			seen[k] = true
		}
		if len(page) < 100 {
			break
		}
		cur = store.After(page[len(page)-1])
	}
	if len(seen) != 750 || pages != 8 {
		t.Errorf("pages covered %d items in %d pages, want 750 in 8", len(seen), pages)
	}
}
