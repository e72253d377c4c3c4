package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// TestPreviousReview checks the change-line lookup (newest done review of
// the same repository and change key, never a running one or another
// line's) and the stored link and file keys of an incremental review.
func TestPreviousReview(t *testing.T) {
	t.Parallel()
	st := open(t)
	ctx := context.Background()
	create := func(repo, changeKey, since string, carried []string) string {
		t.Helper()
		id, err := st.CreateReview(ctx, review.NewReview{
			Repo: repo, Source: "git", IntentMode: "per_file", Timeout: time.Hour,
			Files: []review.File{{Path: "a.go", Change: "modified", Diff: "@@", Content: content("x\n")}},
			Incremental: review.Incremental{ChangeKey: changeKey, Since: since,
				FileKeys: map[string]string{"a.go": "k1"}, Carried: carried},
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	finish := func(id string) {
		t.Helper()
		if _, err := st.Advance(ctx, id, review.StageIntent, review.StageDone, func(context.Context, *store.Tx) ([]review.Item, error) {
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if id, err := st.PreviousReview(ctx, "/r", "pr:1"); err != nil || id != "" {
		t.Fatalf("no reviews yet: %q, %v", id, err)
	}
	older := create("/r", "pr:1", "", nil)
	finish(older)
	newer := create("/r", "pr:1", "", nil)
	finish(newer)
	create("/r", "pr:1", "", nil) // still running
	other := create("/r", "pr:2", "", nil)
	finish(other)
	if id, err := st.PreviousReview(ctx, "/r", "pr:1"); err != nil || id != newer {
		t.Fatalf("PreviousReview = %q, %v; want the newer done review %s", id, err, newer)
	}
	if id, _ := st.PreviousReview(ctx, "/other", "pr:1"); id != "" {
		t.Fatalf("another repository's review was found: %s", id)
	}

	if since, err := st.SinceReview(ctx, create("/r", "pr:1", newer, nil)); err != nil || since != newer {
		t.Fatalf("SinceReview = %q, %v; want %s", since, err, newer)
	}
	keys, err := st.FileResultKeys(ctx, newer)
	if err != nil || keys["a.go"] != "k1" {
		t.Fatalf("FileResultKeys = %v, %v", keys, err)
	}
}
