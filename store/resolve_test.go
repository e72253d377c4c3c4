package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// A re-review resolves only what the earlier review reported on files it
// looked at again: not its dropped findings, and nothing on a file it
// skipped this time.
func TestResolveSinceResolvesOnlyReportedFindingsOfReviewedFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, conn := migratedWithConn(t)
	files := func(skipB string) []review.File {
		return []review.File{
			{Path: "a.go", Change: "modified", Diff: "@@", Content: content("x\n")},
			{Path: "b.go", Change: "modified", Diff: "@@", Content: content("y\n"), SkipReason: skipB},
		}
	}
	old, err := st.CreateReview(ctx, review.NewReview{Repo: "/r", Source: "git", IntentMode: "per_file", Timeout: time.Hour,
		Files: files(""), Incremental: review.Incremental{FileKeys: map[string]string{"a.go": "k1", "b.go": "k2"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `
		INSERT INTO findings (review_id, origin, ordinal, risk_type, file, line_start, line_end, description,
		                      severity, confidence_initial, confidence, status, fingerprint) VALUES
		  ($1, 'i', 1, 'robustness', 'a.go', 1, 1, 'reported and fixed', 'high', 0.9, 0.9, 'active', 'fp1'),
		  ($1, 'i', 2, 'robustness', 'a.go', 1, 1, 'dropped by a cap', 'high', 0.9, 0.9, 'dropped', 'fp2'),
		  ($1, 'i', 3, 'robustness', 'b.go', 1, 1, 'on a file skipped now', 'high', 0.9, 0.9, 'active', 'fp3')`, old); err != nil {
		t.Fatal(err)
	}
	newer, err := st.CreateReview(ctx, review.NewReview{Repo: "/r", Source: "git", IntentMode: "per_file", Timeout: time.Hour,
		Files: files("ignored_by_repo_config"), Incremental: review.Incremental{Since: old, FileKeys: map[string]string{"a.go": "k1b"}}})
	if err != nil {
		t.Fatal(err)
	}
	var resolved int64
	if _, err := st.Advance(ctx, newer, review.StageIntent, review.StageDone, func(ctx context.Context, tx *store.Tx) ([]review.Item, error) {
		resolved, err = tx.ResolveSince(ctx)
		return nil, err
	}); err != nil {
		t.Fatal(err)
	}
	if resolved != 1 {
		t.Errorf("resolved %d findings, want 1", resolved)
	}
	if n := count(t, conn, `SELECT count(*) FROM findings WHERE resolved_in = $1 AND fingerprint = 'fp1'`, newer); n != 1 {
		t.Error("the reported finding the re-review no longer raises is not resolved")
	}
}
