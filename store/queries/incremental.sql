-- name: LinkReview :exec
UPDATE reviews SET since_review = sqlc.narg(since_review), change_key = @change_key WHERE id = @id;

-- name: CopyFileResults :copyfrom
INSERT INTO file_results (review_id, path, key, carried) VALUES (@review_id, @path, @key, @carried);

-- name: CarryFindings :exec
-- Merged findings are not copied: the finding they were folded into is.
INSERT INTO findings (review_id, origin, ordinal, risk_type, file, line_start, line_end, description,
                      suggestion, severity, confidence_initial, confidence, status, drop_reason, score,
                      quote, fix_diff, fingerprint, carried_from)
SELECT @to_review, 'carried', row_number() OVER (ORDER BY f.id), f.risk_type, f.file, f.line_start, f.line_end,
       f.description, f.suggestion, f.severity, f.confidence_initial, f.confidence, f.status, f.drop_reason, f.score,
       f.quote, f.fix_diff, f.fingerprint, f.id
FROM findings f
WHERE f.review_id = @from_review AND f.file = ANY(@paths::text[]) AND f.status IN ('active', 'dropped');

-- name: CarryVerdicts :exec
INSERT INTO verdicts (review_id, finding_id, stage, verdict, confidence_before, confidence_after,
                      reason, evidence, model, tokens_in, tokens_out, latency_ms)
SELECT @to_review, n.id, v.stage, v.verdict, v.confidence_before, v.confidence_after,
       v.reason, v.evidence, v.model, 0, 0, 0
FROM findings n JOIN verdicts v ON v.finding_id = n.carried_from
WHERE n.review_id = @to_review;

-- name: CarryExpertRuns :exec
INSERT INTO expert_runs (review_id, finding_id, stop_reason, rounds, tool_calls, phases, checks, error, tool_outcomes)
SELECT @to_review, n.id, e.stop_reason, e.rounds, e.tool_calls, e.phases, e.checks, e.error, e.tool_outcomes
FROM findings n JOIN expert_runs e ON e.finding_id = n.carried_from
WHERE n.review_id = @to_review;

-- name: PreviousReview :one
SELECT id FROM reviews
WHERE repo = @repo AND change_key = @change_key AND status = 'done' AND NOT incomplete
ORDER BY created_at DESC LIMIT 1;

-- name: FileResultKeys :many
SELECT path, key FROM file_results WHERE review_id = @review_id;

-- name: SinceReview :one
SELECT since_review FROM reviews WHERE id = @id;
