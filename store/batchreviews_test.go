package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// While a batch is being submitted its entry counts come from the entries
// recorded so far, so they agree with its reviews; each entry lists its
// review, a linked one the line that owns the review it shares.
func TestBatchReviewsAndCountsDuringSubmission(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	b, err := st.CreateBatch(ctx, store.Batch{ID: uuid.NewString(), Name: "b", Entries: 5})
	if err != nil {
		t.Fatal(err)
	}
	own := queuedReview(t, st, b.ID, review.KindBulk)
	earlier := queuedReview(t, st, "", "")
	findings, _ := json.Marshal(map[string]any{"findings": []map[string]string{{"severity": "high"}, {"severity": "high"}, {"severity": "low"}}})
	if err := st.SaveReport(ctx, store.Report{ReviewID: own, Markdown: "m", JSON: findings, SARIF: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	for _, e := range []store.BatchEntry{
		{Line: 2, Repo: "https://git.example/a.git", BaseRef: "main", HeadRef: "x", ReviewID: own, Labels: map[string]string{"team": "core"}},
		{Line: 3, Repo: "https://git.example/a.git", BaseRef: "main", HeadRef: "x", ReviewID: own, Duplicate: true},
		{Line: 5, Repo: "https://git.example/b.git", BaseRef: "main", HeadRef: "y", ReviewID: earlier, Duplicate: true},
		{Line: 6, Repo: "https://git.example/c.git", BaseRef: "main", HeadRef: "gone", Error: "unknown revision gone"},
	} {
		if err := st.SaveBatchEntry(ctx, b.ID, e); err != nil {
			t.Fatal(err)
		}
	}
	c, err := st.BatchEntryCounts(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := (store.EntryCounts{Entries: 5, New: 1, Linked: 2, Errors: 1, Recorded: 4}); c != want || c.Pending() != 1 {
		t.Fatalf("counts %+v (pending %d), want %+v (pending 1)", c, c.Pending(), want)
	}
	p, err := st.GetBatchProgress(ctx, b.ID)
	if err != nil || p.Reviews != 2 {
		t.Fatalf("progress %+v %v: want the 2 distinct reviews the submitted entries name", p, err)
	}

	rows, err := st.BatchReviews(ctx, b.ID)
	if err != nil || len(rows) != 4 {
		t.Fatalf("rows %+v %v", rows, err)
	}
	if r := rows[0]; r.Line != 2 || r.ReviewID != own || r.Linked || r.Status != "queued" || r.Findings["high"] != 2 ||
		r.Findings["low"] != 1 || r.Labels["team"] != "core" {
		t.Errorf("own entry %+v", r)
	}
	if r := rows[1]; !r.Linked || r.LinkedLine != 2 || r.ReviewID != own || r.Findings["high"] != 2 {
		t.Errorf("entry linked within the batch %+v, want it to name line 2", r)
	}
	if r := rows[2]; !r.Linked || r.LinkedLine != 0 || r.ReviewID != earlier {
		t.Errorf("entry linked to an earlier review %+v", r)
	}
	if r := rows[3]; r.Status != "unsubmitted" || r.ReviewID != "" || r.Error != "unknown revision gone" {
		t.Errorf("unsubmitted entry %+v", r)
	}
	if _, err := st.BatchEntryCounts(ctx, uuid.NewString()); err == nil {
		t.Error("counting a batch that does not exist succeeded")
	}
}
