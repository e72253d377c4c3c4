package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// A run whose item was handed to a newer run (its worker's heartbeat had
// gone) cannot record its result when it finishes late: only the newer
// run's findings are stored, once.
func TestStaleRunCannotCloseRescuedItem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	id := newReview(t, st, "p1")
	old, err := st.ClaimItem(ctx, id, review.StageIntent, "p1", "w-dead", 0)
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := st.ClaimedItems(ctx, id)
	if err != nil || len(claimed) != 1 || claimed[0].WorkerID != "w-dead" {
		t.Fatalf("claimed items: %+v %v", claimed, err)
	}
	moved, err := st.RescueItems(ctx, claimed)
	if err != nil || len(moved) != 1 || moved[0].Generation != 1 {
		t.Fatalf("rescue: %+v %v", moved, err)
	}
	if again, err := st.RescueItems(ctx, claimed); err != nil || len(again) != 0 {
		t.Fatalf("second rescue of the same claim moved %d items (%v), want none", len(again), err)
	}
	// The old task, delivered again after its lease, is stale.
	if _, err := st.ClaimItem(ctx, id, review.StageIntent, "p1", "w-other", 0); !errors.Is(err, store.ErrStaleTask) {
		t.Fatalf("old generation claim: %v, want ErrStaleTask", err)
	}
	fresh, err := st.ClaimItem(ctx, id, review.StageIntent, "p1", "w-new", 1)
	if err != nil {
		t.Fatal(err)
	}
	fs := []review.Finding{{RiskType: review.Robustness, File: "a.go", LineStart: 3, LineEnd: 3, Description: "d", Severity: review.High, Confidence: 0.8}}
	if err := st.FinishIntentItem(store.WithClaim(ctx, old), id, "p1", append(fs, fs...)); !errors.Is(err, store.ErrClaimLost) {
		t.Fatalf("stale run's finish: %v, want ErrClaimLost", err)
	}
	if err := st.FailItem(store.WithClaim(ctx, old), id, review.StageIntent, "p1", "late failure"); !errors.Is(err, store.ErrItemClosed) {
		t.Fatalf("stale run's failure: %v, want ErrItemClosed", err)
	}
	if err := st.FinishIntentItem(store.WithClaim(ctx, fresh), id, "p1", fs); err != nil {
		t.Fatalf("new run's finish: %v", err)
	}
	if err := st.FinishIntentItem(store.WithClaim(ctx, old), id, "p1", fs); !errors.Is(err, store.ErrItemClosed) {
		t.Fatalf("stale run after close: %v, want ErrItemClosed", err)
	}
	got, err := st.ListFindings(ctx, id)
	if err != nil || len(got) != 1 {
		t.Fatalf("findings: %d %v, want exactly the new run's one", len(got), err)
	}
	it, err := st.GetItem(ctx, id, review.StageIntent, "p1")
	if err != nil || it.Status != review.ItemDone || it.Attempts != 2 {
		t.Fatalf("item: %+v %v", it, err)
	}
	// A delivery after the close claims nothing and says why.
	if _, err := st.ClaimItem(ctx, id, review.StageIntent, "p1", "w-late", 1); !errors.Is(err, store.ErrItemClosed) {
		t.Fatalf("claim of a closed item: %v, want ErrItemClosed", err)
	}
	if _, err := st.ClaimItem(ctx, id, review.StageIntent, "no-such-item", "w-late", 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("claim of a missing item: %v, want ErrNotFound", err)
	}
	if it, _ := st.GetItem(ctx, id, review.StageIntent, "p1"); it.Claims != 2 || it.WorkerID != "w-new" {
		t.Fatalf("refused claims changed the item: %+v", it)
	}
}

// Two reconcilers (two scheduler replicas) never hold the leader lock at
// once; the lock is free again once released.
func TestLeaderLockIsExclusive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	release, ok, err := st.TryLeader(ctx, "test")
	if err != nil || !ok {
		t.Fatalf("first: %v %v", ok, err)
	}
	if _, ok, err := st.TryLeader(ctx, "test"); err != nil || ok {
		t.Fatalf("second while held: ok=%v err=%v, want refused", ok, err)
	}
	release()
	release2, ok, err := st.TryLeader(ctx, "test")
	if err != nil || !ok {
		t.Fatalf("after release: %v %v", ok, err)
	}
	release2()
}
