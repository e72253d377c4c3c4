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
-- The order is admission's (admission.go, admissionCandidates):
-- interactive reviews by age, then batch reviews by the place each would
-- take in its batch's turn (its batch's running reviews plus its rank among
-- the batch's queued ones), then by age.
WITH running AS (
    SELECT r.batch_id, count(*) AS n FROM reviews r
    WHERE r.status = 'running' AND r.deadline_at > now() AND r.batch_id IS NOT NULL
    GROUP BY r.batch_id
), queued AS (
    SELECT r.id, r.kind, r.created_at, r.batch_id,
           row_number() OVER (PARTITION BY r.batch_id ORDER BY r.created_at, r.id) + coalesce(ru.n, 0) AS turn
    FROM reviews r
    LEFT JOIN batches b ON b.id = r.batch_id
    LEFT JOIN running ru ON ru.batch_id = r.batch_id
    WHERE r.status = 'queued' AND (b.id IS NULL OR b.status <> 'cancelled')
), q AS (
    SELECT queued.id, row_number() OVER (ORDER BY (queued.kind = 'bulk'),
               CASE WHEN queued.batch_id IS NULL THEN 0 ELSE queued.turn END, queued.created_at, queued.id) AS pos
    FROM queued
)
SELECT coalesce((SELECT q.pos FROM q WHERE q.id = @id::uuid), 0)::bigint AS pos,
       (SELECT count(*) FROM q)::bigint AS total;
