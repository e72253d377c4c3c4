-- name: ClaimItem :one
-- A generation below zero skips the generation check; an attempt above
-- zero is the task's own count of its counted attempts. Calls of the
-- item's earlier runs still marked started are closed as abandoned in the
-- same statement, their rows locked in id order (lockorder.go). status is
-- the item's status before the claim ('': no such item), which tells a
-- closed item from a stale task when nothing was claimed. The commit does
-- not wait for the WAL flush (store/claims.go: item progress).
WITH progress AS (
    SELECT set_config('synchronous_commit', 'off', true) AS commit_mode
), claimed AS (
    UPDATE stage_items SET claims = claims + 1,
           attempts = CASE WHEN @attempt::integer > 0 THEN greatest(attempts, @attempt::integer) ELSE attempts + 1 END,
           updated_at = now(), started_at = now(),
           queued_at = sqlc.narg(queued_at), worker_id = nullif(@worker_id::text, ''), claim = @claim, claimed_at = now()
    FROM progress
    WHERE review_id = @review_id AND stage = @stage AND item_key = @item_key AND status = 'pending'
      AND (@generation::integer < 0 OR generation = @generation::integer)
    RETURNING 1
), target AS (
    SELECT t.id FROM llm_calls t
    WHERE t.review_id = @review_id AND t.stage = @stage::text AND t.item_key = @item_key AND t.status = 'started'
      AND EXISTS (SELECT 1 FROM claimed)
    ORDER BY t.id FOR UPDATE
), abandoned AS (
    UPDATE llm_calls SET status = 'abandoned', error = 'the run that sent it ended before the reply was recorded'
    FROM target
    WHERE llm_calls.id = target.id AND llm_calls.status = 'started'
)
SELECT EXISTS (SELECT 1 FROM claimed) AS claimed,
       coalesce((SELECT i.status FROM stage_items i
                 WHERE i.review_id = @review_id AND i.stage = @stage AND i.item_key = @item_key), '')::text AS status;

-- name: ClaimedItems :many
SELECT i.review_id, i.stage, i.item_key, i.generation, i.worker_id, (r.kind = 'bulk')::boolean AS bulk
FROM stage_items i JOIN reviews r ON r.id = i.review_id
WHERE i.status = 'pending' AND i.worker_id IS NOT NULL
  AND r.status = 'running' AND r.stage = i.stage
  AND (@only_review::text = '' OR i.review_id::text = @only_review::text);

-- name: RescueItem :one
UPDATE stage_items SET generation = generation + 1, worker_id = NULL, claim = NULL,
       claimed_at = NULL, enqueued_at = NULL, updated_at = now()
WHERE review_id = @review_id AND stage = @stage AND item_key = @item_key AND status = 'pending'
  AND coalesce(worker_id, '') = @worker_id::text AND generation = @generation
RETURNING generation;
