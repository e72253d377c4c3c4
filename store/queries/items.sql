-- name: InsertItem :exec
INSERT INTO stage_items (review_id, stage, item_key, payload)
VALUES (@review_id, @stage, @item_key, @payload)
ON CONFLICT (review_id, stage, item_key) DO NOTHING;

-- name: GetItem :one
SELECT status, payload, attempts, claims, error, generation, worker_id FROM stage_items
WHERE review_id = @review_id AND stage = @stage AND item_key = @item_key;

-- name: ListItems :many
SELECT item_key, status, payload, attempts, error, generation FROM stage_items
WHERE review_id = @review_id AND stage = @stage ORDER BY item_key;

-- name: CloseItem :one
-- The review's tokens and cost grow once per item, by what the item's
-- calls used, rather than with every call. With check_claim set the item
-- closes only while claim is still its claim.
WITH closed AS (
	UPDATE stage_items SET status = @status, error = @reason, updated_at = now(), finished_at = now()
	WHERE stage_items.review_id = @review_id AND stage_items.stage = @stage AND stage_items.item_key = @item_key
	  AND stage_items.status = 'pending'
	  AND (NOT @check_claim::boolean OR stage_items.claim IS NOT DISTINCT FROM sqlc.narg(claim)::uuid)
	RETURNING stage_items.review_id
), used AS (
	SELECT coalesce(sum(c.tokens_in), 0)::bigint AS i, coalesce(sum(c.tokens_out), 0)::bigint AS o,
	       coalesce(sum(c.cost), 0)::double precision AS c
	FROM llm_calls c WHERE c.review_id = @review_id AND c.stage = @stage AND c.item_key = @item_key
), rolled AS (
	UPDATE reviews SET tokens_in = tokens_in + used.i, tokens_out = tokens_out + used.o, cost = cost + used.c
	FROM used WHERE reviews.id = (SELECT closed.review_id FROM closed) AND (used.i > 0 OR used.o > 0 OR used.c > 0)
)
SELECT count(*) FROM closed;

-- name: LockItem :one
SELECT status, claim FROM stage_items
WHERE review_id = @review_id AND stage = @stage AND item_key = @item_key
FOR UPDATE;

-- name: ItemStatus :one
SELECT status FROM stage_items WHERE review_id = @review_id AND stage = @stage AND item_key = @item_key;

-- name: ReturnItem :execrows
UPDATE stage_items SET attempts = greatest(attempts - 1, 0), error = @reason, updated_at = now(),
       enqueued_at = CASE WHEN @forget::boolean THEN NULL ELSE enqueued_at END
WHERE review_id = @review_id AND stage = @stage AND item_key = @item_key AND status = 'pending'
  AND (NOT @check_claim::boolean OR claim IS NOT DISTINCT FROM sqlc.narg(claim)::uuid);

-- name: StageOutcome :one
SELECT count(*) AS total, count(*) FILTER (WHERE status = 'failed') AS failed,
       count(*) FILTER (WHERE status = 'pending') AS pending,
       coalesce((SELECT f.error FROM stage_items f
                 WHERE f.review_id = @review_id AND f.stage = @stage AND f.status = 'failed'
                 ORDER BY f.item_key LIMIT 1), '')::text AS first_error
FROM stage_items WHERE review_id = @review_id AND stage = @stage;

-- name: MarkEnqueued :exec
-- The rows are locked in key order first (lockorder.go).
WITH target AS (
    SELECT t.item_key FROM stage_items t
    WHERE t.review_id = @review_id AND t.stage = @stage AND t.item_key = ANY(@keys::text[])
    ORDER BY t.item_key COLLATE "C" FOR UPDATE)
UPDATE stage_items SET enqueued_at = now()
FROM target
WHERE stage_items.review_id = @review_id AND stage_items.stage = @stage AND stage_items.item_key = target.item_key;

-- name: Progress :many
SELECT stage, count(*) AS total, count(*) FILTER (WHERE status = 'done') AS done,
       count(*) FILTER (WHERE status = 'failed') AS failed
FROM stage_items WHERE review_id = @review_id GROUP BY stage;

-- name: FailedItems :many
SELECT stage, item_key, payload, attempts, error FROM stage_items
WHERE review_id = @review_id AND status = 'failed' ORDER BY stage, item_key;

-- name: MarkItemsEnqueued :exec
-- The rows are locked in key order before the update: two passes over
-- overlapping items listed in different orders otherwise lock them in
-- opposite orders and one of them dies of a deadlock.
WITH target AS (
	SELECT i.review_id, i.stage, i.item_key
	FROM stage_items i
	JOIN (SELECT unnest(@review_ids::uuid[]) AS review_id, unnest(@stages::text[]) AS stage,
	             unnest(@item_keys::text[]) AS item_key) u
	  ON i.review_id = u.review_id AND i.stage = u.stage AND i.item_key = u.item_key
	ORDER BY i.review_id, i.stage COLLATE "C", i.item_key COLLATE "C"
	FOR UPDATE OF i)
UPDATE stage_items i SET enqueued_at = now()
FROM target t
WHERE i.review_id = t.review_id AND i.stage = t.stage AND i.item_key = t.item_key;

-- name: StalledReviews :many
SELECT r.id, r.stage FROM reviews r
WHERE r.status = 'running' AND r.stage_started_at < now() - @older_than::interval
  AND (@only_review::text = '' OR r.id::text = @only_review::text)
  AND NOT EXISTS (SELECT 1 FROM stage_items i
                  WHERE i.review_id = r.id AND i.stage = r.stage AND i.status = 'pending');

-- name: FailExpiredReviews :many
-- The rows are locked in id order first (lockorder.go).
WITH target AS (
    SELECT t.id FROM reviews t
    WHERE t.status IN ('queued', 'running') AND t.deadline_at < now()
      AND (@only_review::text = '' OR t.id::text = @only_review::text)
    ORDER BY t.id FOR UPDATE)
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
RETURNING reviews.id;

-- name: UnfinishedItems :many
SELECT stage, item_key, status, attempts, error FROM stage_items
WHERE review_id = @review_id AND status NOT IN ('done', 'failed') ORDER BY stage, item_key;

-- name: ItemTimings :many
SELECT stage, item_key, queued_at, started_at, finished_at
FROM stage_items WHERE review_id = @review_id ORDER BY stage, item_key;

-- name: CopyItems :copyfrom
INSERT INTO stage_items (review_id, stage, item_key, payload) VALUES (@review_id, @stage, @item_key, @payload);

-- name: PendingPage :many
-- One keyset page of pending items in primary-key order, read through
-- stage_items_pending_idx (see TestPendingPageUsesIndex).
SELECT i.review_id, i.stage, i.item_key, i.attempts, i.generation, i.worker_id, (r.kind = 'bulk')::boolean AS bulk
FROM stage_items i JOIN reviews r ON r.id = i.review_id
WHERE i.status = 'pending'
  AND (i.review_id, i.stage, i.item_key) > (@after_review::uuid, @after_stage::text, @after_key::text)
  AND r.status = 'running' AND r.stage = i.stage
  AND (i.enqueued_at IS NULL OR i.enqueued_at < now() - @older_than::interval)
ORDER BY i.review_id, i.stage, i.item_key
LIMIT @max_items;

-- name: PendingPageOfReview :many
-- PendingPage for one review: a separate statement rather than an
-- optional filter, so that the plan of the fleet-wide page never has to
-- allow for one.
SELECT i.review_id, i.stage, i.item_key, i.attempts, i.generation, i.worker_id, (r.kind = 'bulk')::boolean AS bulk
FROM stage_items i JOIN reviews r ON r.id = i.review_id
WHERE i.status = 'pending'
  AND (i.review_id, i.stage, i.item_key) > (@after_review::uuid, @after_stage::text, @after_key::text)
  AND r.status = 'running' AND r.stage = i.stage
  AND (i.enqueued_at IS NULL OR i.enqueued_at < now() - @older_than::interval)
  AND i.review_id = @review_id
ORDER BY i.review_id, i.stage, i.item_key
LIMIT @max_items;
