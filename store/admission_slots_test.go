package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// queuedWithItems stores a queued review whose first stage has n items.
func queuedWithItems(t *testing.T, st *store.Store, batch string, kind review.Kind, n int) string {
	t.Helper()
	var items []review.Item
	for i := range n {
		items = append(items, review.Item{Stage: review.StageIntent, Key: fmt.Sprint("f", i)})
	}
	id, err := st.CreateReview(context.Background(), review.NewReview{
		Repo: "/repo", Source: "git", IntentMode: "per_file", Timeout: time.Hour,
		Queued: true, Kind: kind, BatchID: batch, Items: items,
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func newBatch(t *testing.T, st *store.Store, maxRunning int) string {
	t.Helper()
	b, err := st.CreateBatch(context.Background(), store.Batch{ID: uuid.NewString(), Name: "b", MaxRunning: maxRunning})
	if err != nil {
		t.Fatal(err)
	}
	return b.ID
}

// With the slots known and no ceiling, batch reviews start while the
// pending items of running reviews leave room for them (BatchRoom per
// slot), interactive ones up to InteractiveRoom per slot; the first
// review a room allows starts whatever its items.
func TestAdmissionFillsTheSlots(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	batch := newBatch(t, st, 0)
	for range 10 {
		queuedWithItems(t, st, batch, review.KindBulk, 3)
	}
	const slots = 4 // room for 8 pending items of batch reviews
	ids, err := st.AdmitReviews(ctx, store.Admission{Slots: slots}, "")
	if err != nil {
		t.Fatal(err)
	}
	// 3 + 3 = 6 leave room, 9 do not: three reviews.
	if want := (store.BatchRoom*slots + 2) / 3; len(ids) != want {
		t.Fatalf("admitted %d batch reviews of 3 items for %d slots, want %d", len(ids), slots, want)
	}
	if ids, err := st.AdmitReviews(ctx, store.Admission{Slots: slots}, ""); err != nil || len(ids) != 0 {
		t.Fatalf("admitted %v more with the slots' room used (%v)", ids, err)
	}
	// Interactive reviews have their own, larger room, and go first.
	var inter []string
	for range 4 {
		inter = append(inter, queuedWithItems(t, st, "", "", 3))
	}
	ids, err = st.AdmitReviews(ctx, store.Admission{Slots: slots}, "")
	if err != nil {
		t.Fatal(err)
	}
	// 9 pending; interactive room 16: 9, 12 and 15 leave room, 18 does not.
	if len(ids) != 3 || ids[0] != inter[0] {
		t.Fatalf("admitted %v, want the three oldest interactive reviews %v", ids, inter[:3])
	}
	// Items ending free room: three of the 18 pending items closed leave
	// none for batches (15 ≥ 8) but one more interactive review (15 < 16).
	for i := range 3 {
		if err := st.FailItem(ctx, ids[0], review.StageIntent, fmt.Sprint("f", i), "test"); err != nil {
			t.Fatal(err)
		}
	}
	ids, err = st.AdmitReviews(ctx, store.Admission{Slots: slots}, "")
	if err != nil || len(ids) != 1 || ids[0] != inter[3] {
		t.Fatalf("admitted %v after items ended (%v), want the last interactive review", ids, err)
	}
}

// Batches take turns: each next place goes to the batch with the fewest
// running reviews, so two batches split the fleet evenly whatever their
// order, and a lone batch takes all of it.
func TestBatchesShareTheFleetEvenly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	first, second := newBatch(t, st, 0), newBatch(t, st, 0)
	byBatch := map[string]string{}
	for range 8 {
		byBatch[queuedWithItems(t, st, first, review.KindBulk, 1)] = first
	}
	for range 8 {
		byBatch[queuedWithItems(t, st, second, review.KindBulk, 1)] = second
	}
	ids, err := st.AdmitReviews(ctx, store.Admission{Slots: 3}, "") // room for 6
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, id := range ids {
		got[byBatch[id]]++
	}
	if len(ids) != 6 || got[first] != 3 || got[second] != 3 {
		t.Fatalf("admitted %d: %d of the first batch, %d of the second; want 3 and 3", len(ids), got[first], got[second])
	}
	// A batch alone fills the fleet.
	lone := open(t)
	b := newBatch(t, lone, 0)
	for range 8 {
		queuedWithItems(t, lone, b, review.KindBulk, 1)
	}
	if ids, err := lone.AdmitReviews(ctx, store.Admission{Slots: 3}, ""); err != nil || len(ids) != 6 {
		t.Fatalf("a lone batch was admitted %d reviews for 6 places (%v)", len(ids), err)
	}
}

// While the provider asks the fleet to wait, batch reviews stay queued
// (their deadline would only run out waiting); interactive ones start.
func TestHoldBatchesAdmitsInteractiveOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	queuedWithItems(t, st, newBatch(t, st, 0), review.KindBulk, 1)
	inter := queuedWithItems(t, st, "", "", 1)
	ids, err := st.AdmitReviews(ctx, store.Admission{Slots: 8, HoldBatches: true}, "")
	if err != nil || len(ids) != 1 || ids[0] != inter {
		t.Fatalf("admitted %v while holding batches (%v), want only %s", ids, err, inter)
	}
}
