package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// deadlocked reports Postgres aborting a statement with "deadlock
// detected" (SQLSTATE 40P01).
func deadlocked(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "40P01"
}

// Several reconcilers and workers doing the fleet's bookkeeping at once on
// the same reviews and items, each listing the rows in an order of its
// own, never deadlock: every statement that touches several rows locks
// them in key order. Other errors (an item closed or handed on
// meanwhile) are the races the callers expect.
func TestBookkeepingNeverDeadlocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	const reviewsPerBatch, itemsPerReview = 12, 8
	var batches, reviewIDs []string
	for range 3 {
		b, err := st.CreateBatch(ctx, store.Batch{ID: uuid.NewString(), Name: "b"})
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b.ID)
		for i := range reviewsPerBatch {
			// A third start running, some already past their deadline;
			// the rest wait for admission.
			nr := review.NewReview{Repo: "/repo", Source: "git", IntentMode: "per_file", Timeout: time.Hour,
				Kind: review.KindBulk, BatchID: b.ID, Queued: i%3 != 0}
			if i%6 == 0 {
				nr.Timeout = time.Millisecond
			}
			for k := range itemsPerReview {
				nr.Items = append(nr.Items, review.Item{Stage: review.StageIntent, Key: fmt.Sprint("k", k)})
			}
			id, err := st.CreateReview(ctx, nr)
			if err != nil {
				t.Fatal(err)
			}
			reviewIDs = append(reviewIDs, id)
		}
	}

	var (
		mu       sync.Mutex
		deadlock []error
	)
	check := func(err error) {
		if deadlocked(err) {
			mu.Lock()
			deadlock = append(deadlock, err)
			mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	for r := range 3 { // reconcilers
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 1))
			for range 25 {
				page, err := st.PendingPage(ctx, store.PendingCursor{}, 0, 10000, "")
				check(err)
				rng.Shuffle(len(page), func(i, j int) { page[i], page[j] = page[j], page[i] })
				check(st.MarkItemsEnqueued(ctx, page))
				claimed, err := st.ClaimedItems(ctx, "")
				check(err)
				rng.Shuffle(len(claimed), func(i, j int) { claimed[i], claimed[j] = claimed[j], claimed[i] })
				_, err = st.RescueItems(ctx, claimed)
				check(err)
				_, err = st.FailExpiredReviews(ctx, "")
				check(err)
				_, err = st.AdmitReviews(ctx, store.Admission{Slots: 4}, "")
				check(err)
			}
		}()
	}
	for w := range 4 { // workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 2))
			worker := fmt.Sprint("host:", w)
			for i := range 120 {
				id := reviewIDs[rng.IntN(len(reviewIDs))]
				keys := make([]string, itemsPerReview)
				for k := range keys {
					keys[k] = fmt.Sprint("k", k)
				}
				rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
				check(st.MarkEnqueued(ctx, id, review.StageIntent, keys))
				// An enqueue marks its items in the order their parallel
				// enqueues finished: any order, across two reviews.
				other := reviewIDs[rng.IntN(len(reviewIDs))]
				var items []review.Item
				for _, k := range keys {
					items = append(items, review.Item{ReviewID: id, Stage: review.StageIntent, Key: k},
						review.Item{ReviewID: other, Stage: review.StageIntent, Key: k})
				}
				rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
				check(st.MarkItemsEnqueued(ctx, items))
				key := keys[0]
				claim, err := st.ClaimItemAttempt(ctx, id, review.StageIntent, key, worker, -1, time.Now(), 0)
				check(err)
				if err == nil {
					check(st.ReturnItem(store.WithClaim(ctx, claim), id, review.StageIntent, key, "given back", i%2 == 0))
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // a user cancelling two of the batches meanwhile
		defer wg.Done()
		for _, b := range batches[:2] {
			_, err := st.CancelBatch(ctx, b)
			check(err)
		}
	}()
	wg.Wait()
	for _, err := range deadlock {
		t.Error(err)
	}
}
