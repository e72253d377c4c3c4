package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
)

// ErrItemClosed is returned when a handler tries to finish a ledger item
// that is already done or failed (a duplicate delivery).
var ErrItemClosed = errors.New("ledger item already closed")

func insertItems(ctx context.Context, q *sqlcdb.Queries, reviewID string, items []review.Item) error {
	for _, it := range items {
		if err := q.InsertItem(ctx, sqlcdb.InsertItemParams{
			ReviewID: reviewID, Stage: it.Stage, ItemKey: it.Key, Payload: orJSON(it.Payload, `{}`),
		}); err != nil {
			return fmt.Errorf("insert ledger item %s/%s: %w", it.Stage, it.Key, err)
		}
	}
	return nil
}

// copyItems inserts the ledger rows of a review created in the same
// transaction with COPY: no row can exist yet, and a large change has tens
// of thousands of them.
func copyItems(ctx context.Context, q *sqlcdb.Queries, reviewID string, items []review.Item) error {
	rows := make([]sqlcdb.CopyItemsParams, 0, len(items))
	for _, it := range items {
		rows = append(rows, sqlcdb.CopyItemsParams{ReviewID: reviewID, Stage: it.Stage, ItemKey: it.Key, Payload: orJSON(it.Payload, `{}`)})
	}
	if _, err := q.CopyItems(ctx, rows); err != nil {
		return fmt.Errorf("insert %d ledger items: %w", len(items), err)
	}
	return nil
}

// GetItem loads one ledger item.
func (s *Store) GetItem(ctx context.Context, reviewID string, stage review.Stage, key string) (review.Item, error) {
	r, err := s.q.GetItem(ctx, sqlcdb.GetItemParams{ReviewID: reviewID, Stage: stage, ItemKey: key})
	if err != nil {
		return review.Item{}, fmt.Errorf("get item %s/%s of %s: %w", stage, key, reviewID, translate(err))
	}
	return review.Item{ReviewID: reviewID, Stage: stage, Key: key, Status: r.Status, Payload: r.Payload,
		Attempts: int(r.Attempts), Claims: int(r.Claims), Error: r.Error, Generation: int(r.Generation),
		WorkerID: orEmpty(r.WorkerID)}, nil
}

// ListItems returns a stage's ledger items ordered by key.
func (s *Store) ListItems(ctx context.Context, reviewID string, stage review.Stage) ([]review.Item, error) {
	rows, err := s.q.ListItems(ctx, sqlcdb.ListItemsParams{ReviewID: reviewID, Stage: stage})
	if err != nil {
		return nil, fmt.Errorf("list %s items of %s: %w", stage, reviewID, err)
	}
	var out []review.Item
	for _, r := range rows {
		out = append(out, review.Item{ReviewID: reviewID, Stage: stage, Key: r.ItemKey, Status: r.Status,
			Payload: r.Payload, Attempts: int(r.Attempts), Error: r.Error, Generation: int(r.Generation)})
	}
	return out, nil
}

// StartItem counts one more attempt at a pending item (a run without a
// worker or claim: tests and tools).
func (s *Store) StartItem(ctx context.Context, reviewID string, stage review.Stage, key string) error {
	_, err := s.ClaimItem(ctx, reviewID, stage, key, "", -1)
	if errors.Is(err, ErrStaleTask) {
		return nil
	}
	return err
}

// closeItem marks a pending item done or failed inside tx. It returns
// ErrItemClosed when the item was not pending, and ErrClaimLost when ctx
// carries a claim that is no longer the item's.
func closeItem(ctx context.Context, tx pgx.Tx, reviewID string, stage review.Stage, key string, status review.ItemStatus, reason string) error {
	claim, checked := claimFrom(ctx)
	// The review's tokens and cost grow once per item, by what the item's
	// calls used, rather than with every call.
	n, err := sqlcdb.New(tx).CloseItem(ctx, sqlcdb.CloseItemParams{
		ReviewID: reviewID, Stage: stage, ItemKey: key, Status: status, Reason: reason,
		CheckClaim: checked, Claim: nonEmpty(claim),
	})
	if err != nil {
		return fmt.Errorf("close item %s/%s: %w", stage, key, err)
	}
	if n == 0 {
		if checked {
			return lostOrClosed(ctx, tx, reviewID, stage, key)
		}
		return ErrItemClosed
	}
	return nil
}

// SkipItemBudget closes a pending item as skipped because its review's LLM
// budget is spent; the review goes on and completes without it.
// ErrItemClosed when it was no longer pending.
func (s *Store) SkipItemBudget(ctx context.Context, reviewID string, stage review.Stage, key, reason string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		return closeItem(ctx, tx, reviewID, stage, key, review.ItemSkippedBudget, reason)
	})
}

// lockPending takes a row lock on a pending item so that two deliveries of
// the same task cannot both write results; ErrItemClosed when not pending,
// ErrClaimLost when ctx's claim is no longer the item's (a newer run of a
// rescued item owns it).
func lockPending(ctx context.Context, tx pgx.Tx, reviewID string, stage review.Stage, key string) error {
	r, err := sqlcdb.New(tx).LockItem(ctx, sqlcdb.LockItemParams{ReviewID: reviewID, Stage: stage, ItemKey: key})
	if err != nil {
		return fmt.Errorf("lock item %s/%s: %w", stage, key, translate(err))
	}
	if r.Status != review.ItemPending {
		return ErrItemClosed
	}
	if mine, checked := claimFrom(ctx); checked && (r.Claim == nil || *r.Claim != mine) {
		return ErrClaimLost
	}
	return nil
}

// FailItem marks a pending item failed with a reason; the review goes on
// without its result. ErrItemClosed when it was no longer pending.
func (s *Store) FailItem(ctx context.Context, reviewID string, stage review.Stage, key, reason string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		return closeItem(ctx, tx, reviewID, stage, key, review.ItemFailed, reason)
	})
}

// ReturnItem gives a pending item back after an attempt that failed for
// reasons outside the item (cancellation, shutdown, Redis or Postgres
// unavailable, a rate limit): the attempt is not counted, and the reason is
// kept as the item's last error so a review that runs out of time can say
// what held it up. With forget set the item is also marked as not
// enqueued, so the reconciler enqueues it again on its next pass (the
// queue gave its task up). ErrItemClosed when it was no longer pending.
func (s *Store) ReturnItem(ctx context.Context, reviewID string, stage review.Stage, key, reason string, forget bool) error {
	claim, checked := claimFrom(ctx) // a run whose item was handed on gives nothing back
	n, err := s.q.ReturnItem(ctx, sqlcdb.ReturnItemParams{
		ReviewID: reviewID, Stage: stage, ItemKey: key, Reason: reason, Forget: forget,
		CheckClaim: checked, Claim: nonEmpty(claim),
	})
	if err != nil {
		return fmt.Errorf("return item %s/%s: %w", stage, key, err)
	}
	if n == 0 {
		return ErrItemClosed
	}
	return nil
}

// StageOutcome is how a stage's items stand.
type StageOutcome struct {
	Total, Failed, Pending int
	// FirstError is the first failure's reason, by item key.
	FirstError string
}

// StageOutcome counts the items of a stage, the failed and the pending
// ones, for deciding whether the stage is over and whether anything was
// reviewed.
func (s *Store) StageOutcome(ctx context.Context, reviewID string, stage review.Stage) (StageOutcome, error) {
	r, err := s.q.StageOutcome(ctx, sqlcdb.StageOutcomeParams{ReviewID: reviewID, Stage: stage})
	if err != nil {
		return StageOutcome{}, fmt.Errorf("outcome of %s items of %s: %w", stage, reviewID, err)
	}
	return StageOutcome{Total: int(r.Total), Failed: int(r.Failed), Pending: int(r.Pending), FirstError: r.FirstError}, nil
}

// MarkEnqueued records that the items were handed to the queue now.
func (s *Store) MarkEnqueued(ctx context.Context, reviewID string, stage review.Stage, keys []string) error {
	if err := s.q.MarkEnqueued(ctx, sqlcdb.MarkEnqueuedParams{ReviewID: reviewID, Stage: stage, Keys: keys}); err != nil {
		return fmt.Errorf("mark %s items enqueued: %w", stage, err)
	}
	return nil
}

// StageProgress counts a stage's ledger items.
type StageProgress struct {
	Stage  review.Stage
	Total  int
	Done   int
	Failed int
}

// Progress returns the ledger counts of every stage a review has reached.
func (s *Store) Progress(ctx context.Context, reviewID string) ([]StageProgress, error) {
	rows, err := s.q.Progress(ctx, reviewID)
	if err != nil {
		return nil, fmt.Errorf("progress of %s: %w", reviewID, err)
	}
	var out []StageProgress
	for _, r := range rows {
		out = append(out, StageProgress{Stage: r.Stage, Total: int(r.Total), Done: int(r.Done), Failed: int(r.Failed)})
	}
	return out, nil
}

// FailedItems returns every failed ledger item of a review.
func (s *Store) FailedItems(ctx context.Context, reviewID string) ([]review.Item, error) {
	rows, err := s.q.FailedItems(ctx, reviewID)
	if err != nil {
		return nil, fmt.Errorf("failed items of %s: %w", reviewID, err)
	}
	var out []review.Item
	for _, r := range rows {
		out = append(out, review.Item{ReviewID: reviewID, Status: review.ItemFailed, Stage: r.Stage, Key: r.ItemKey,
			Payload: r.Payload, Attempts: int(r.Attempts), Error: r.Error})
	}
	return out, nil
}

// PendingCursor is where a page of PendingPage starts: after the item
// with this key. The zero value starts at the beginning.
type PendingCursor struct {
	ReviewID string
	Stage    review.Stage
	Key      string
}

// After returns the cursor that continues after it.
func After(it review.Item) PendingCursor {
	return PendingCursor{ReviewID: it.ReviewID, Stage: it.Stage, Key: it.Key}
}

// PendingPage returns up to limit pending items of running reviews, in the
// review's current stage, that were never enqueued or were enqueued longer
// ago than olderThan, after the cursor in key order — the reconciler's
// candidates for re-enqueueing. A non-empty only restricts them to one
// review. A page shorter than limit is the last one.
func (s *Store) PendingPage(ctx context.Context, after PendingCursor, olderThan time.Duration, limit int, only string) ([]review.Item, error) {
	if after.ReviewID == "" {
		after.ReviewID = "00000000-0000-0000-0000-000000000000"
	}
	p := sqlcdb.PendingPageParams{AfterReview: after.ReviewID, AfterStage: string(after.Stage), AfterKey: after.Key,
		OlderThan: olderThan, MaxItems: int32(min(limit, math.MaxInt32))}
	var rows []sqlcdb.PendingPageRow
	var err error
	if only == "" {
		rows, err = s.q.PendingPage(ctx, p)
	} else {
		var one []sqlcdb.PendingPageOfReviewRow
		one, err = s.q.PendingPageOfReview(ctx, sqlcdb.PendingPageOfReviewParams{AfterReview: p.AfterReview,
			AfterStage: p.AfterStage, AfterKey: p.AfterKey, OlderThan: p.OlderThan, MaxItems: p.MaxItems, ReviewID: only})
		for _, r := range one {
			rows = append(rows, sqlcdb.PendingPageRow(r))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("list pending items: %w", translate(err))
	}
	var out []review.Item
	for _, r := range rows {
		out = append(out, review.Item{Status: review.ItemPending, ReviewID: r.ReviewID, Stage: r.Stage, Key: r.ItemKey,
			Attempts: int(r.Attempts), Generation: int(r.Generation), WorkerID: orEmpty(r.WorkerID), Bulk: r.Bulk})
	}
	return out, nil
}

// ExplainPendingPage returns the query plan of PendingPage, for the test
// that keeps its index in use.
func (s *Store) ExplainPendingPage(ctx context.Context) (string, error) {
	rows, err := s.pool.Query(ctx, "EXPLAIN "+sqlcdb.PendingPageSQL,
		"00000000-0000-0000-0000-000000000000", "", "", 30*time.Second, 2000)
	if err != nil {
		return "", fmt.Errorf("explain pending page: %w", err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		plan = append(plan, line)
	}
	return strings.Join(plan, "\n"), rows.Err()
}

// MarkItemsEnqueued records, in one statement, that the items were handed
// to their queues now.
func (s *Store) MarkItemsEnqueued(ctx context.Context, items []review.Item) error {
	if len(items) == 0 {
		return nil
	}
	ids, stages, keys := make([]string, len(items)), make([]string, len(items)), make([]string, len(items))
	for i, it := range items {
		ids[i], stages[i], keys[i] = it.ReviewID, string(it.Stage), it.Key
	}
	// The statement locks the rows in key order before it updates them.
	err := s.q.MarkItemsEnqueued(ctx, sqlcdb.MarkItemsEnqueuedParams{ReviewIds: ids, Stages: stages, ItemKeys: keys})
	if err != nil {
		return fmt.Errorf("mark %d items enqueued: %w", len(items), err)
	}
	return nil
}

// StalledReview is a running review whose current stage has no pending
// items left but that has not moved on (its last handler died between
// finishing its item and advancing the review).
type StalledReview struct {
	ID    string
	Stage review.Stage
}

// StalledReviews lists running reviews whose current stage is complete
// (only one review when only is not empty).
func (s *Store) StalledReviews(ctx context.Context, olderThan time.Duration, only string) ([]StalledReview, error) {
	rows, err := s.q.StalledReviews(ctx, sqlcdb.StalledReviewsParams{OlderThan: olderThan, OnlyReview: only})
	if err != nil {
		return nil, fmt.Errorf("list stalled reviews: %w", err)
	}
	var out []StalledReview
	for _, r := range rows {
		out = append(out, StalledReview{ID: r.ID, Stage: r.Stage})
	}
	return out, nil
}

// FailExpiredReviews fails every running review past its deadline (only
// one review when only is not empty), naming the stage it was stuck in and
// the last error that held its items up, and returns their IDs.
func (s *Store) FailExpiredReviews(ctx context.Context, only string) ([]string, error) {
	ids, err := s.q.FailExpiredReviews(ctx, only)
	if err != nil {
		return nil, fmt.Errorf("fail expired reviews: %w", err)
	}
	return ids, nil
}

// UnfinishedItems returns the items of a review that never finished
// (neither done nor failed), ordered by stage and key: what an interrupted
// review did not run.
func (s *Store) UnfinishedItems(ctx context.Context, reviewID string) ([]review.Item, error) {
	rows, err := s.q.UnfinishedItems(ctx, reviewID)
	if err != nil {
		return nil, fmt.Errorf("unfinished items of %s: %w", reviewID, err)
	}
	var out []review.Item
	for _, r := range rows {
		out = append(out, review.Item{ReviewID: reviewID, Stage: r.Stage, Key: r.ItemKey, Status: r.Status,
			Attempts: int(r.Attempts), Error: r.Error})
	}
	return out, nil
}

// ItemTiming is when one ledger item's last task was queued and started,
// and when the item closed (zero when not recorded).
type ItemTiming struct {
	Stage                     review.Stage
	Key                       string
	Queued, Started, Finished time.Time
}

// ItemTimings returns the timings of a review's items.
func (s *Store) ItemTimings(ctx context.Context, reviewID string) ([]ItemTiming, error) {
	rows, err := s.q.ItemTimings(ctx, reviewID)
	if err != nil {
		return nil, fmt.Errorf("item timings of %s: %w", reviewID, err)
	}
	var out []ItemTiming
	for _, r := range rows {
		out = append(out, ItemTiming{Stage: r.Stage, Key: r.ItemKey,
			Queued: orZero(r.QueuedAt), Started: orZero(r.StartedAt), Finished: orZero(r.FinishedAt)})
	}
	return out, nil
}
