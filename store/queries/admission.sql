-- name: TakeAdmissionLock :exec
SELECT pg_advisory_xact_lock(@key::bigint);

-- name: CountRunningReviews :one
-- A running review past its deadline holds no place: the reconciler is
-- about to fail it.
SELECT count(*) FROM reviews WHERE status = 'running' AND deadline_at > now();

-- name: ChooseAdmissions :many
-- Interactive reviews first, then the oldest, never more than a batch's
-- cap (its own, or per_batch) from one batch.
WITH running AS (
    SELECT batch_id, count(*) AS n FROM reviews
    WHERE status = 'running' AND deadline_at > now() AND batch_id IS NOT NULL
    GROUP BY batch_id),
cand AS (
    SELECT r.id, r.kind, r.created_at, r.batch_id,
           row_number() OVER (PARTITION BY r.batch_id ORDER BY r.created_at, r.id) AS rn,
           coalesce(nullif(b.max_running, 0), @per_batch::integer) AS cap,
           coalesce(ru.n, 0) AS n
    FROM reviews r
    LEFT JOIN batches b ON b.id = r.batch_id
    LEFT JOIN running ru ON ru.batch_id = r.batch_id
    WHERE r.status = 'queued' AND (@only_review::text = '' OR r.id::text = @only_review::text)
      AND (b.id IS NULL OR b.status <> 'cancelled'))
SELECT cand.id FROM cand
WHERE cand.batch_id IS NULL OR cand.cap <= 0 OR cand.rn + cand.n <= cand.cap
ORDER BY (cand.kind = 'bulk'), cand.created_at, cand.id
LIMIT @max_reviews;

-- name: AdmitReviews :many
UPDATE reviews
SET status = 'running', started_at = now(), stage_started_at = now(),
    deadline_at = now() + make_interval(secs => timeout_ms / 1000.0)
WHERE id = ANY(@ids::uuid[]) AND status = 'queued'
RETURNING id;

-- name: QueuePosition :one
WITH q AS (
    SELECT r.id, row_number() OVER (ORDER BY (r.kind = 'bulk'), r.created_at, r.id) AS pos
    FROM reviews r WHERE r.status = 'queued')
SELECT coalesce((SELECT q.pos FROM q WHERE q.id = @id::uuid), 0)::bigint AS pos,
       (SELECT count(*) FROM q)::bigint AS total;
