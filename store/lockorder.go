package store

import (
	"cmp"
	"slices"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// Lock order. Two transactions that lock overlapping rows in different
// orders can each wait for the other, and Postgres aborts one with
// "deadlock detected". Every statement or transaction here that locks
// several rows of a table therefore locks them in key order:
//
//   - reviews by id (admission, batch cancel, deadline expiry): a CTE
//     selects the rows ORDER BY id FOR UPDATE, then the UPDATE joins it;
//   - stage_items by (review_id, stage, item_key), the text in byte order
//     (COLLATE "C", as Go compares strings): MarkItemsEnqueued and
//     MarkEnqueued order their CTE so, RescueItems sorts before its loop;
//   - llm_calls by id (the calls a new claim abandons), findings by id
//     (those a later review resolves).
//
// Prune's batched deletes are left to the plan's order: they touch only
// ended history, which no worker or reconciler writes.
//
// An UPDATE … WHERE key = ANY($1) or FROM unnest($1) alone does not fix
// the order: the plan decides it, and a nested loop over the array
// follows the caller's order. TestBookkeepingNeverDeadlocks runs the
// fleet's bookkeeping from several reconcilers and workers at once.

// sortItems orders items by their ledger key (review, stage, item).
func sortItems(items []review.Item) {
	slices.SortFunc(items, func(a, b review.Item) int {
		return cmp.Or(cmp.Compare(a.ReviewID, b.ReviewID), cmp.Compare(a.Stage, b.Stage), cmp.Compare(a.Key, b.Key))
	})
}
