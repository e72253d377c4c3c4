-- name: TakeAdmissionLock :exec
SELECT pg_advisory_xact_lock(@key::bigint);

-- name: CountRunningReviews :one
-- A running review past its deadline holds no place: the reconciler is
-- about to fail it.
SELECT count(*) FROM reviews WHERE status = 'running' AND deadline_at > now();

-- name: AdmitReviews :many
-- The rows are locked in id order, as every multi-row update of reviews
-- is (lockorder.go).
WITH target AS (
    SELECT t.id FROM reviews t WHERE t.id = ANY(@ids::uuid[]) AND t.status = 'queued'
    ORDER BY t.id FOR UPDATE)
UPDATE reviews
SET status = 'running', started_at = now(), stage_started_at = now(),
    deadline_at = now() + make_interval(secs => reviews.timeout_ms / 1000.0)
FROM target
WHERE reviews.id = target.id AND reviews.status = 'queued'
RETURNING reviews.id;

-- name: QueuePosition :one
WITH q AS (
    SELECT r.id, row_number() OVER (ORDER BY (r.kind = 'bulk'), r.created_at, r.id) AS pos
    FROM reviews r WHERE r.status = 'queued')
SELECT coalesce((SELECT q.pos FROM q WHERE q.id = @id::uuid), 0)::bigint AS pos,
       (SELECT count(*) FROM q)::bigint AS total;
