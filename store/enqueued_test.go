package store_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/reviewfleet/reviewfleet/store"
)

// Two passes marking overlapping items enqueued, each listing them in its
// own order, must not deadlock: the reconciler and an enqueuer do exactly
// this, and Postgres aborted one of them with "deadlock detected".
func TestMarkItemsEnqueuedConcurrentlyInAnyOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, dsn := migrated(t, ctx)
	fill(t, ctx, dsn, 4, 50, 0)
	items, err := st.PendingPage(ctx, store.PendingCursor{}, 0, 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 200 {
		t.Fatalf("%d pending items, want 200", len(items))
	}
	reversed := slices.Clone(items)
	slices.Reverse(reversed)
	for round := range 20 {
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for w := range 4 {
			batch := items
			if w%2 == 1 {
				batch = reversed
			}
			wg.Go(func() { errs[w] = st.MarkItemsEnqueued(ctx, batch) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
