-- name: AdvanceReview :execrows
-- The move is one conditional UPDATE: no item of from_stage pending, and
-- not every one of them failed (a stage that reviewed nothing fails the
-- review instead). Exactly one caller wins.
UPDATE reviews
SET stage = @to_stage, status = @status, stage_started_at = now(),
    finished_at = CASE WHEN @status = 'done' THEN now() ELSE finished_at END,
    failed_items = f.n, skipped_budget = f.skipped, incomplete = (@status = 'done' AND f.n + f.skipped > 0)
FROM (SELECT count(*) FILTER (WHERE s.status = 'failed') AS n,
             count(*) FILTER (WHERE s.status = 'skipped_budget') AS skipped
      FROM stage_items s WHERE s.review_id = @id AND s.status IN ('failed', 'skipped_budget')) f
WHERE reviews.id = @id AND reviews.stage = @from_stage AND reviews.status = 'running'
  AND NOT EXISTS (SELECT 1 FROM stage_items p
                  WHERE p.review_id = @id AND p.stage = @from_stage AND p.status = 'pending')
  AND (NOT EXISTS (SELECT 1 FROM stage_items a WHERE a.review_id = @id AND a.stage = @from_stage)
       OR EXISTS (SELECT 1 FROM stage_items o
                  WHERE o.review_id = @id AND o.stage = @from_stage AND o.status <> 'failed'));

-- name: StageVerdicts :many
SELECT finding_id, verdict, confidence_before, confidence_after, reason
FROM verdicts WHERE review_id = @review_id AND stage = @stage;

-- name: ChangedLines :many
SELECT path, changed_lines FROM review_files WHERE review_id = @review_id AND skip_reason = '';

-- name: TriageFinding :exec
UPDATE findings SET status = @status, drop_reason = @reason, merged_into = sqlc.narg(merged_into),
       score = @score,
       line_start = CASE WHEN @line_start::integer > 0 THEN @line_start::integer ELSE line_start END,
       line_end = CASE WHEN @line_end::integer > 0 THEN @line_end::integer ELSE line_end END
WHERE id = @id AND review_id = @review_id;

-- name: SaveEvalSummary :exec
INSERT INTO eval_summaries (review_id, risk_type, confirmed, disputed, uncertain)
VALUES (@review_id, @risk_type, @confirmed, @disputed, @uncertain)
ON CONFLICT (review_id, risk_type) DO UPDATE
SET confirmed = EXCLUDED.confirmed, disputed = EXCLUDED.disputed, uncertain = EXCLUDED.uncertain;

-- name: ResolveSince :execrows
-- Resolves the active findings of the review this one builds on that sit
-- on files it did not carry and whose fingerprint no finding reviewed
-- here has; a file skipped now resolves nothing. The rows are locked in
-- id order first (lockorder.go): two reviews built on the same earlier one
-- resolve overlapping findings.
WITH target AS (
    SELECT old.id FROM findings old
    JOIN reviews r ON r.id = @review_id::uuid
    WHERE old.review_id = r.since_review
      AND old.resolved_in IS NULL
      AND old.status = 'active'
      AND NOT EXISTS (SELECT 1 FROM review_files rf
                      WHERE rf.review_id = r.id AND rf.path = old.file AND rf.skip_reason <> '')
      AND NOT EXISTS (SELECT 1 FROM file_results fr
                      WHERE fr.review_id = r.id AND fr.path = old.file AND fr.carried)
      AND NOT EXISTS (SELECT 1 FROM findings n
                      WHERE n.review_id = r.id AND n.carried_from IS NULL
                        AND n.fingerprint <> '' AND n.fingerprint = old.fingerprint)
    ORDER BY old.id FOR UPDATE OF old)
UPDATE findings SET resolved_in = @review_id::uuid
FROM target
WHERE findings.id = target.id AND findings.resolved_in IS NULL;
