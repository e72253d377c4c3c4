package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// ErrItemClosed is returned when a handler tries to finish a ledger item
// that is already done or failed (a duplicate delivery).
var ErrItemClosed = errors.New("ledger item already closed")

func insertItems(ctx context.Context, tx pgx.Tx, reviewID string, items []review.Item) error {
	for _, it := range items {
		payload := it.Payload
		if payload == nil {
			payload = json.RawMessage(`{}`)
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO stage_items (review_id, stage, item_key, payload)
			VALUES ($1, $2, $3, $4)
			ON CONFLICT (review_id, stage, item_key) DO NOTHING`,
			reviewID, string(it.Stage), it.Key, payload); err != nil {
			return fmt.Errorf("insert ledger item %s/%s: %w", it.Stage, it.Key, err)
		}
	}
	return nil
}

// copyItems inserts the ledger rows of a review created in the same
// transaction with COPY: no row can exist yet, and a large change has tens
// of thousands of them.
func copyItems(ctx context.Context, tx pgx.Tx, reviewID string, items []review.Item) error {
	rows := make([][]any, 0, len(items))
	for _, it := range items {
		payload := it.Payload
		if payload == nil {
			payload = json.RawMessage(`{}`)
		}
		rows = append(rows, []any{reviewID, string(it.Stage), it.Key, payload})
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"stage_items"},
		[]string{"review_id", "stage", "item_key", "payload"}, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("insert %d ledger items: %w", len(items), err)
	}
	return nil
}

// GetItem loads one ledger item.
func (s *Store) GetItem(ctx context.Context, reviewID string, stage review.Stage, key string) (review.Item, error) {
	it := review.Item{ReviewID: reviewID, Stage: stage, Key: key}
	err := s.pool.QueryRow(ctx, `
		SELECT status, payload, attempts, claims, error, generation, coalesce(worker_id, '') FROM stage_items
		WHERE review_id = $1 AND stage = $2 AND item_key = $3`, reviewID, string(stage), key).
		Scan(&it.Status, &it.Payload, &it.Attempts, &it.Claims, &it.Error, &it.Generation, &it.WorkerID)
	if err != nil {
		return review.Item{}, fmt.Errorf("get item %s/%s of %s: %w", stage, key, reviewID, translate(err))
	}
	return it, nil
}

// ListItems returns a stage's ledger items ordered by key.
func (s *Store) ListItems(ctx context.Context, reviewID string, stage review.Stage) ([]review.Item, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT item_key, status, payload, attempts, error, generation FROM stage_items
		WHERE review_id = $1 AND stage = $2 ORDER BY item_key`, reviewID, string(stage))
	if err != nil {
		return nil, fmt.Errorf("list %s items of %s: %w", stage, reviewID, err)
	}
	defer rows.Close()
	var out []review.Item
	for rows.Next() {
		it := review.Item{ReviewID: reviewID, Stage: stage}
		if err := rows.Scan(&it.Key, &it.Status, &it.Payload, &it.Attempts, &it.Error, &it.Generation); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
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
	var n int
	err := tx.QueryRow(ctx, `
		WITH closed AS (
			UPDATE stage_items SET status = $4, error = $5, updated_at = now(), finished_at = now()
			WHERE review_id = $1 AND stage = $2 AND item_key = $3 AND status = 'pending'
			  AND (NOT $6 OR claim IS NOT DISTINCT FROM $7::uuid)
			RETURNING review_id
		), used AS (
			SELECT coalesce(sum(tokens_in), 0) AS i, coalesce(sum(tokens_out), 0) AS o, coalesce(sum(cost), 0) AS c
			FROM llm_calls WHERE review_id = $1 AND stage = $2 AND item_key = $3
		), rolled AS (
			UPDATE reviews SET tokens_in = tokens_in + used.i, tokens_out = tokens_out + used.o, cost = cost + used.c
			FROM used WHERE id = (SELECT review_id FROM closed) AND (used.i > 0 OR used.o > 0 OR used.c > 0)
		)
		SELECT count(*) FROM closed`,
		reviewID, string(stage), key, string(status), reason, checked, claimOrNil(claim)).Scan(&n)
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
	var status review.ItemStatus
	var claim *string
	err := tx.QueryRow(ctx, `
		SELECT status, claim::text FROM stage_items WHERE review_id = $1 AND stage = $2 AND item_key = $3
		FOR UPDATE`, reviewID, string(stage), key).Scan(&status, &claim)
	if err != nil {
		return fmt.Errorf("lock item %s/%s: %w", stage, key, translate(err))
	}
	if status != review.ItemPending {
		return ErrItemClosed
	}
	if mine, checked := claimFrom(ctx); checked && (claim == nil || *claim != mine) {
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
	tag, err := s.pool.Exec(ctx, `
		UPDATE stage_items SET attempts = greatest(attempts - 1, 0), error = $4, updated_at = now(),
		       enqueued_at = CASE WHEN $5 THEN NULL ELSE enqueued_at END
		WHERE review_id = $1 AND stage = $2 AND item_key = $3 AND status = 'pending'
		  AND (NOT $6 OR claim IS NOT DISTINCT FROM $7::uuid)`,
		reviewID, string(stage), key, reason, forget, checked, claimOrNil(claim))
	if err != nil {
		return fmt.Errorf("return item %s/%s: %w", stage, key, err)
	}
	if tag.RowsAffected() == 0 {
		return ErrItemClosed
	}
	return nil
}

// StageOutcome counts the closed items of a stage and returns the first
// failure's reason (by key), for deciding whether anything was reviewed.
func (s *Store) StageOutcome(ctx context.Context, reviewID string, stage review.Stage) (total, failed int, firstError string, err error) {
	err = s.pool.QueryRow(ctx, `
		SELECT count(*), count(*) FILTER (WHERE status = 'failed'),
		       coalesce((SELECT error FROM stage_items WHERE review_id = $1 AND stage = $2 AND status = 'failed'
		                 ORDER BY item_key LIMIT 1), '')
		FROM stage_items WHERE review_id = $1 AND stage = $2`, reviewID, string(stage)).
		Scan(&total, &failed, &firstError)
	if err != nil {
		return 0, 0, "", fmt.Errorf("outcome of %s items of %s: %w", stage, reviewID, err)
	}
	return total, failed, firstError, nil
}

// MarkEnqueued records that the items were handed to the queue now.
func (s *Store) MarkEnqueued(ctx context.Context, reviewID string, stage review.Stage, keys []string) error {
	_, err := s.pool.Exec(ctx, `
		WITH target AS (
		    SELECT item_key FROM stage_items WHERE review_id = $1 AND stage = $2 AND item_key = ANY($3)
		    ORDER BY item_key COLLATE "C" FOR UPDATE)
		UPDATE stage_items i SET enqueued_at = now()
		FROM target t
		WHERE i.review_id = $1 AND i.stage = $2 AND i.item_key = t.item_key`, reviewID, string(stage), keys)
	if err != nil {
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
	rows, err := s.pool.Query(ctx, `
		SELECT stage, count(*), count(*) FILTER (WHERE status = 'done'),
		       count(*) FILTER (WHERE status = 'failed')
		FROM stage_items WHERE review_id = $1 GROUP BY stage`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("progress of %s: %w", reviewID, err)
	}
	defer rows.Close()
	var out []StageProgress
	for rows.Next() {
		var p StageProgress
		var stage string
		if err := rows.Scan(&stage, &p.Total, &p.Done, &p.Failed); err != nil {
			return nil, err
		}
		p.Stage = review.Stage(stage)
		out = append(out, p)
	}
	return out, rows.Err()
}

// FailedItems returns every failed ledger item of a review.
func (s *Store) FailedItems(ctx context.Context, reviewID string) ([]review.Item, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT stage, item_key, payload, attempts, error FROM stage_items
		WHERE review_id = $1 AND status = 'failed' ORDER BY stage, item_key`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("failed items of %s: %w", reviewID, err)
	}
	defer rows.Close()
	var out []review.Item
	for rows.Next() {
		it := review.Item{ReviewID: reviewID, Status: review.ItemFailed}
		var stage string
		if err := rows.Scan(&stage, &it.Key, &it.Payload, &it.Attempts, &it.Error); err != nil {
			return nil, err
		}
		it.Stage = review.Stage(stage)
		out = append(out, it)
	}
	return out, rows.Err()
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

// pendingPageSQL reads one keyset page of pending items in primary-key
// order through stage_items_pending_idx (see TestPendingPageUsesIndex).
const pendingPageSQL = `
	SELECT i.review_id, i.stage, i.item_key, i.attempts, i.generation, coalesce(i.worker_id, ''), r.kind = 'bulk'
	FROM stage_items i JOIN reviews r ON r.id = i.review_id
	WHERE i.status = 'pending'
	  AND (i.review_id, i.stage, i.item_key) > ($1::uuid, $2, $3)
	  AND r.status = 'running' AND r.stage = i.stage
	  AND (i.enqueued_at IS NULL OR i.enqueued_at < now() - $4::interval)
	  %s
	ORDER BY i.review_id, i.stage COLLATE "C", i.item_key COLLATE "C"
	LIMIT $5`

// PendingPage returns up to limit pending items of running reviews, in the
// review's current stage, that were never enqueued or were enqueued longer
// ago than olderThan, after the cursor in key order — the reconciler's
// candidates for re-enqueueing. A non-empty only restricts them to one
// review. A page shorter than limit is the last one.
func (s *Store) PendingPage(ctx context.Context, after PendingCursor, olderThan time.Duration, limit int, only string) ([]review.Item, error) {
	if after.ReviewID == "" {
		after.ReviewID = "00000000-0000-0000-0000-000000000000"
	}
	args := []any{after.ReviewID, string(after.Stage), after.Key,
		fmt.Sprintf("%d milliseconds", olderThan.Milliseconds()), limit}
	extra := ""
	if only != "" {
		extra = "AND i.review_id = $6::uuid"
		args = append(args, only)
	}
	rows, err := s.pool.Query(ctx, fmt.Sprintf(pendingPageSQL, extra), args...)
	if err != nil {
		return nil, fmt.Errorf("list pending items: %w", translate(err))
	}
	defer rows.Close()
	var out []review.Item
	for rows.Next() {
		it := review.Item{Status: review.ItemPending}
		var stage string
		if err := rows.Scan(&it.ReviewID, &stage, &it.Key, &it.Attempts, &it.Generation, &it.WorkerID, &it.Bulk); err != nil {
			return nil, err
		}
		it.Stage = review.Stage(stage)
		out = append(out, it)
	}
	return out, rows.Err()
}

// ExplainPendingPage returns the query plan of PendingPage, for the test
// that keeps its index in use.
func (s *Store) ExplainPendingPage(ctx context.Context) (string, error) {
	rows, err := s.pool.Query(ctx, "EXPLAIN "+fmt.Sprintf(pendingPageSQL, ""),
		"00000000-0000-0000-0000-000000000000", "", "", "30000 milliseconds", 2000)
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
	// The rows are locked in key order before the update: two passes
	// over overlapping items listed in different orders otherwise lock
	// them in opposite orders and one of them dies of a deadlock.
	_, err := s.pool.Exec(ctx, `
		WITH target AS (
			SELECT i.review_id, i.stage, i.item_key
			FROM stage_items i
			JOIN unnest($1::uuid[], $2::text[], $3::text[]) AS u(review_id, stage, item_key)
			  ON i.review_id = u.review_id AND i.stage = u.stage AND i.item_key = u.item_key
			ORDER BY i.review_id, i.stage COLLATE "C", i.item_key COLLATE "C"
			FOR UPDATE OF i)
		UPDATE stage_items i SET enqueued_at = now()
		FROM target t
		WHERE i.review_id = t.review_id AND i.stage = t.stage AND i.item_key = t.item_key`,
		ids, stages, keys)
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
	rows, err := s.pool.Query(ctx, `
		SELECT r.id, r.stage FROM reviews r
		WHERE r.status = 'running' AND r.stage_started_at < now() - $1::interval
		  AND ($2 = '' OR r.id::text = $2)
		  AND NOT EXISTS (SELECT 1 FROM stage_items i
		                  WHERE i.review_id = r.id AND i.stage = r.stage AND i.status = 'pending')`,
		fmt.Sprintf("%d milliseconds", olderThan.Milliseconds()), only)
	if err != nil {
		return nil, fmt.Errorf("list stalled reviews: %w", err)
	}
	defer rows.Close()
	var out []StalledReview
	for rows.Next() {
		var sr StalledReview
		var stage string
		if err := rows.Scan(&sr.ID, &stage); err != nil {
			return nil, err
		}
		sr.Stage = review.Stage(stage)
		out = append(out, sr)
	}
	return out, rows.Err()
}

// FailExpiredReviews fails every running review past its deadline (only
// one review when only is not empty), naming the stage it was stuck in and
// the last error that held its items up, and returns their IDs.
func (s *Store) FailExpiredReviews(ctx context.Context, only string) ([]string, error) {
	rows, err := s.pool.Query(ctx, `
		WITH target AS (
		    SELECT id FROM reviews
		    WHERE status IN ('queued', 'running') AND deadline_at < now() AND ($1 = '' OR id::text = $1)
		    ORDER BY id FOR UPDATE)
		UPDATE reviews SET status = 'failed', finished_at = now(),
		       failed_items = (SELECT count(*) FROM stage_items i WHERE i.review_id = reviews.id AND i.status = 'failed'),
		       error = format('review deadline passed at %s while in stage %s (%s pending items)%s',
		                      to_char(deadline_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), stage,
		                      (SELECT count(*) FROM stage_items i WHERE i.review_id = reviews.id
		                         AND i.stage = reviews.stage AND i.status = 'pending'),
		                      coalesce('; last error: ' || (SELECT i.error FROM stage_items i
		                         WHERE i.review_id = reviews.id AND i.stage = reviews.stage
		                           AND i.status = 'pending' AND i.error <> ''
		                         ORDER BY i.updated_at DESC LIMIT 1), ''))
		FROM target
		WHERE reviews.id = target.id AND reviews.status IN ('queued', 'running') AND reviews.deadline_at < now()
		RETURNING reviews.id`, only)
	if err != nil {
		return nil, fmt.Errorf("fail expired reviews: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// UnfinishedItems returns the items of a review that never finished
// (neither done nor failed), ordered by stage and key: what an interrupted
// review did not run.
func (s *Store) UnfinishedItems(ctx context.Context, reviewID string) ([]review.Item, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT stage, item_key, status, attempts, error FROM stage_items
		WHERE review_id = $1 AND status NOT IN ('done', 'failed') ORDER BY stage, item_key`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("unfinished items of %s: %w", reviewID, err)
	}
	defer rows.Close()
	var out []review.Item
	for rows.Next() {
		it := review.Item{ReviewID: reviewID}
		var stage string
		if err := rows.Scan(&stage, &it.Key, &it.Status, &it.Attempts, &it.Error); err != nil {
			return nil, err
		}
		it.Stage = review.Stage(stage)
		out = append(out, it)
	}
	return out, rows.Err()
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
	rows, err := s.pool.Query(ctx, `
		SELECT stage, item_key, coalesce(queued_at, 'epoch'), coalesce(started_at, 'epoch'), coalesce(finished_at, 'epoch')
		FROM stage_items WHERE review_id = $1 ORDER BY stage, item_key`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("item timings of %s: %w", reviewID, err)
	}
	defer rows.Close()
	var out []ItemTiming
	for rows.Next() {
		var t ItemTiming
		var stage string
		if err := rows.Scan(&stage, &t.Key, &t.Queued, &t.Started, &t.Finished); err != nil {
			return nil, err
		}
		t.Stage = review.Stage(stage)
		for _, p := range []*time.Time{&t.Queued, &t.Started, &t.Finished} {
			if p.Unix() == 0 {
				*p = time.Time{}
			}
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
