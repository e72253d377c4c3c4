package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

func queuedReview(t *testing.T, st *store.Store, batch string, kind review.Kind) string {
	t.Helper()
	id, err := st.CreateReview(context.Background(), review.NewReview{
		Repo: "/repo", Source: "git", IntentMode: "per_file", Timeout: time.Hour,
		Queued: true, Kind: kind, BatchID: batch,
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Eight processes admitting at once never start more reviews than the
// capacity, nor more of one batch than its cap; interactive reviews go
// first, and the deadline counts from admission.
func TestAdmissionNeverExceedsCapacity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	batches := []string{newBatch(t, st, 0), newBatch(t, st, 0)}
	byBatch := map[string]string{}
	for i := range 20 {
		id := queuedReview(t, st, batches[i%2], review.KindBulk)
		byBatch[id] = batches[i%2]
	}
	interactive := []string{queuedReview(t, st, "", ""), queuedReview(t, st, "", "")}

	r, err := st.GetReview(ctx, interactive[0])
	if err != nil || r.Status != review.ReviewQueued || r.DeadlineAt.Before(time.Now().Add(24*time.Hour)) {
		t.Fatalf("a queued review has a deadline already: %+v %v", r, err)
	}
	if pos, total, err := st.QueuePosition(ctx, interactive[1]); err != nil || pos != 2 || total != 22 {
		t.Fatalf("queue position %d of %d, %v; want 2 of 22", pos, total, err)
	}

	adm := store.Admission{Capacity: 5, PerBatch: 2}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := st.AdmitReviews(ctx, adm, ""); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	running, err := st.RunningReviews(ctx)
	if err != nil || running != 5 {
		t.Fatalf("running %d (%v), want the capacity 5", running, err)
	}
	perBatch := map[string]int{}
	for id, b := range byBatch {
		r, err := st.GetReview(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status == review.ReviewRunning {
			perBatch[b]++
		}
	}
	for b, n := range perBatch {
		if n > 2 {
			t.Errorf("batch %s runs %d reviews, cap 2", b, n)
		}
	}
	for _, id := range interactive {
		r, err := st.GetReview(ctx, id)
		if err != nil || r.Status != review.ReviewRunning {
			t.Fatalf("interactive review %s not admitted first: %s %v", id, r.Status, err)
		}
		if d := time.Until(r.DeadlineAt); d < 59*time.Minute || d > time.Hour {
			t.Errorf("deadline %s from now, want the hour of its timeout counted from admission", d)
		}
	}
	// Full: nothing more is admitted until a review ends.
	if ids, err := st.AdmitReviews(ctx, adm, ""); err != nil || len(ids) != 0 {
		t.Fatalf("admitted %v beyond capacity (%v)", ids, err)
	}
	// Two batch places of one batch are taken, one of the other: the
	// place freed by an ending review goes to that other batch.
	if _, err := st.FailReview(ctx, interactive[0], "test"); err != nil {
		t.Fatal(err)
	}
	if ids, err := st.AdmitReviews(ctx, adm, ""); err != nil || len(ids) != 1 {
		t.Fatalf("admitted %v after a review ended, want 1 (%v)", ids, err)
	}
	// Now both batches are at their cap: a freed place stays free…
	if _, err := st.FailReview(ctx, interactive[1], "test"); err != nil {
		t.Fatal(err)
	}
	if ids, err := st.AdmitReviews(ctx, adm, ""); err != nil || len(ids) != 0 {
		t.Fatalf("admitted %v past the batch caps (%v)", ids, err)
	}
	// …unless the cap is lifted.
	adm.PerBatch = 0
	if ids, err := st.AdmitReviews(ctx, adm, ""); err != nil || len(ids) != 1 {
		t.Fatalf("admitted %v without a batch cap, want 1 (%v)", ids, err)
	}
}

// Cancelling a batch fails its queued and running reviews (so queued ones
// are never admitted and handlers stop at the next item of running ones)
// and leaves other reviews alone.
func TestCancelBatchStopsItsReviews(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	b, err := st.CreateBatch(ctx, store.Batch{ID: uuid.NewString(), Name: "b", Entries: 3})
	if err != nil {
		t.Fatal(err)
	}
	running := queuedReview(t, st, b.ID, review.KindBulk)
	if _, err := st.AdmitReviews(ctx, store.Admission{Capacity: 1}, ""); err != nil {
		t.Fatal(err)
	}
	queued := queuedReview(t, st, b.ID, review.KindBulk)
	other := queuedReview(t, st, "", "")
	n, err := st.CancelBatch(ctx, b.ID)
	if err != nil || n != 2 {
		t.Fatalf("cancel stopped %d reviews (%v), want 2", n, err)
	}
	for _, id := range []string{running, queued} {
		r, err := st.GetReview(ctx, id)
		if err != nil || r.Status != review.ReviewFailed || r.Error == "" {
			t.Fatalf("review %s after cancel: %s %q %v", id, r.Status, r.Error, err)
		}
	}
	ids, err := st.AdmitReviews(ctx, store.Admission{Capacity: 5}, "")
	if err != nil || len(ids) != 1 || ids[0] != other {
		t.Fatalf("admitted %v after the cancel, want only %s (%v)", ids, other, err)
	}
	// A review stored in the batch after the cancel (a submission still
	// going) is never admitted.
	late := queuedReview(t, st, b.ID, review.KindBulk)
	if ids, err := st.AdmitReviews(ctx, store.Admission{Capacity: 5}, ""); err != nil || len(ids) != 0 {
		t.Fatalf("admitted %v after the cancel, want none of the cancelled batch's (%v)", ids, err)
	}
	if r, _ := st.GetReview(ctx, late); r.Status != review.ReviewQueued {
		t.Fatalf("late review of a cancelled batch: %s", r.Status)
	}
	if b, err := st.GetBatch(ctx, b.ID); err != nil || b.Status != store.BatchCancelled || b.CancelledAt == nil {
		t.Fatalf("batch after cancel: %+v %v", b, err)
	}
	if _, err := st.CancelBatch(ctx, uuid.NewString()); err == nil {
		t.Fatal("cancelling a batch that does not exist succeeded")
	}
}

// A batch submitted with no cap (bulk --max-running 0, stored as -1) is not
// held to the configured per-batch cap: only the fleet's capacity bounds it.
func TestUncappedBatchIgnoresTheDefaultCap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	capped, err := st.CreateBatch(ctx, store.Batch{ID: uuid.NewString(), Name: "capped"})
	if err != nil {
		t.Fatal(err)
	}
	free, err := st.CreateBatch(ctx, store.Batch{ID: uuid.NewString(), Name: "free", MaxRunning: -1})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		queuedReview(t, st, capped.ID, review.KindBulk)
		queuedReview(t, st, free.ID, review.KindBulk)
	}
	ids, err := st.AdmitReviews(ctx, store.Admission{Capacity: 20, PerBatch: 2}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 7 {
		t.Fatalf("admitted %d reviews, want 2 of the capped batch and all 5 of the uncapped one", len(ids))
	}
}

// A queued review's position is the order admission starts reviews in:
// a later batch's first review goes before an earlier batch's second, as
// the batches take turns.
func TestQueuePositionIsAdmissionOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	batches := []string{newBatch(t, st, 0), newBatch(t, st, 0)}
	var queued []string
	for range 4 {
		queued = append(queued, queuedReview(t, st, batches[0], review.KindBulk))
	}
	for range 2 {
		queued = append(queued, queuedReview(t, st, batches[1], review.KindBulk))
	}
	queued = append(queued, queuedReview(t, st, "", ""))
	if pos, total, err := st.QueuePosition(ctx, queued[4]); err != nil || pos != 3 || total != 7 {
		t.Fatalf("the later batch's first review: position %d of %d (%v), want 3 of 7 (after the interactive review and the earlier batch's first)", pos, total, err)
	}
	// Admitting one review at a time starts them in position order.
	for capacity := 1; capacity <= len(queued); capacity++ {
		next := ""
		for _, id := range queued {
			pos, _, err := st.QueuePosition(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if pos == 1 {
				next = id
			}
		}
		ids, err := st.AdmitReviews(ctx, store.Admission{Capacity: capacity}, "")
		if err != nil || len(ids) != 1 {
			t.Fatalf("admission at capacity %d: %v %v, want one review", capacity, ids, err)
		}
		if ids[0] != next {
			t.Fatalf("admission at capacity %d started %s; position 1 was %s", capacity, ids[0], next)
		}
	}
}
