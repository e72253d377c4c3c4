-- name: CreateBatch :exec
INSERT INTO batches (id, name, source, labels, max_running, entries)
VALUES (@id, @name, @source, @labels, @max_running, @entries)
ON CONFLICT (id) DO NOTHING;

-- name: GetBatch :one
SELECT * FROM batches WHERE id = @id;

-- name: ListBatches :many
SELECT * FROM batches ORDER BY created_at DESC LIMIT @max_batches;

-- name: SaveBatchEntry :exec
INSERT INTO batch_reviews (batch_id, line, repo, base_ref, head_ref, labels, dedupe_key, review_id, duplicate, error)
VALUES (@batch_id, @line, @repo, @base_ref, @head_ref, @labels, @dedupe_key, sqlc.narg(review_id), @duplicate, @error)
ON CONFLICT (batch_id, line) DO UPDATE
SET repo = EXCLUDED.repo, base_ref = EXCLUDED.base_ref, head_ref = EXCLUDED.head_ref,
    labels = EXCLUDED.labels, dedupe_key = EXCLUDED.dedupe_key, review_id = EXCLUDED.review_id,
    duplicate = EXCLUDED.duplicate, error = EXCLUDED.error;

-- name: BatchEntries :many
SELECT line, repo, base_ref, head_ref, labels, dedupe_key, review_id, duplicate, error
FROM batch_reviews WHERE batch_id = @batch_id ORDER BY line;

-- name: FinishBatchSubmission :exec
-- A cancelled batch stays cancelled.
UPDATE batches b SET
    submitted = c.submitted, duplicates = c.duplicates, submit_errors = c.errors,
    status = CASE WHEN b.status = 'cancelled' THEN b.status ELSE 'submitted' END,
    submitted_at = coalesce(b.submitted_at, now())
FROM (SELECT count(*) FILTER (WHERE e.review_id IS NOT NULL) AS submitted,
             count(*) FILTER (WHERE e.duplicate) AS duplicates,
             count(*) FILTER (WHERE e.review_id IS NULL AND e.error <> '') AS errors
      FROM batch_reviews e WHERE e.batch_id = @batch_id) c
WHERE b.id = @batch_id;

-- name: FindDuplicate :one
-- A done review anywhere, or one of the same batch still queued or
-- running; done ones first, then the oldest.
SELECT id FROM reviews
WHERE dedupe_key = @dedupe_key AND (status = 'done' OR (batch_id = sqlc.narg(batch_id)::uuid AND status <> 'failed'))
ORDER BY (status = 'done') DESC, created_at LIMIT 1;

-- name: CancelBatch :execrows
UPDATE batches SET status = 'cancelled', cancelled_at = coalesce(cancelled_at, now()) WHERE id = @id;

-- name: StopBatchReviews :execrows
-- The rows are locked in id order first (lockorder.go).
WITH target AS (
    SELECT t.id FROM reviews t WHERE t.batch_id = @batch_id::uuid AND t.status IN ('queued', 'running')
    ORDER BY t.id FOR UPDATE)
UPDATE reviews SET status = 'failed', finished_at = now(),
       error = 'cancelled with its batch (was ' || reviews.status || ' in stage ' || reviews.stage || ')'
FROM target
WHERE reviews.id = target.id AND reviews.status IN ('queued', 'running');
