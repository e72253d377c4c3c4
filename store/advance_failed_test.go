package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// A stage whose every item failed does not advance, however the caller
// came to ask: the review must be failed instead, not moved on empty.
func TestAdvanceRefusesAStageWhoseItemsAllFailed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, conn := migratedWithConn(t)
	id, err := st.CreateReview(ctx, review.NewReview{Repo: "/r", Source: "git", IntentMode: "per_file", Timeout: time.Hour,
		Files: []review.File{{Path: "a.go", Change: "modified", Diff: "@@", Content: content("x\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DELETE FROM stage_items WHERE review_id = $1`,
		`INSERT INTO stage_items (review_id, stage, item_key, status) VALUES ($1, 'intent', 'a', 'failed'), ($1, 'intent', 'b', 'failed')`} {
		if _, err := conn.Exec(ctx, q, id); err != nil {
			t.Fatal(err)
		}
	}
	won, err := st.Advance(ctx, id, review.StageIntent, review.StageDone, nil)
	if err != nil || won {
		t.Fatalf("Advance over a stage that reviewed nothing: won %v, %v", won, err)
	}
	if _, err := conn.Exec(ctx, `UPDATE stage_items SET status = 'done' WHERE review_id = $1 AND item_key = 'b'`, id); err != nil {
		t.Fatal(err)
	}
	if won, err := st.Advance(ctx, id, review.StageIntent, review.StageDone, nil); err != nil || !won {
		t.Fatalf("Advance with one item reviewed: won %v, %v", won, err)
	}
}
