-- name: InsertReview :exec
-- A queued review has no deadline yet: admission sets it. Until then
-- deadline_at lies far ahead so the expiry sweep ignores it.
INSERT INTO reviews (id, batch_id, repo, source, base_ref, head_ref, base_sha, head_sha,
                     snapshot, status, stage, intent_mode, skipped_stages, config,
                     started_at, deadline_at, purpose, kind, timeout_ms, dedupe_key)
VALUES (@id, sqlc.narg(batch_id), @repo, @source, @base_ref, @head_ref, @base_sha, @head_sha,
        @snapshot,
        CASE WHEN @queued::boolean THEN 'queued' ELSE 'running' END,
        @stage, @intent_mode, @skipped_stages, @config,
        CASE WHEN @queued::boolean THEN NULL ELSE now() END,
        CASE WHEN @queued::boolean THEN now() + '100 years'::interval ELSE now() + @timeout::interval END,
        @purpose, @kind, @timeout_ms::bigint, @dedupe_key);

-- name: GetReview :one
SELECT * FROM reviews WHERE id = $1;

-- name: ListReviews :many
SELECT * FROM reviews ORDER BY created_at DESC LIMIT $1;

-- name: SetSnapshotFallback :exec
UPDATE reviews SET snapshot_fallback = @reason WHERE id = @id AND snapshot_fallback = '';

-- name: FailReview :execrows
-- Tokens and cost are summed from the calls: items still open never
-- added theirs.
UPDATE reviews SET status = 'failed', error = @reason, finished_at = now(),
       failed_items = (SELECT count(*) FROM stage_items i WHERE i.review_id = @id AND i.status = 'failed'),
       tokens_in = c.i, tokens_out = c.o, cost = c.cost
FROM (SELECT coalesce(sum(tokens_in), 0)::bigint AS i, coalesce(sum(tokens_out), 0)::bigint AS o,
             coalesce(sum(cost), 0)::double precision AS cost
      FROM llm_calls l WHERE l.review_id = @id) c
WHERE reviews.id = @id AND reviews.status IN ('queued', 'running');

-- name: ListFiles :many
SELECT path, old_path, change, is_binary, skip_reason, additions, deletions, changed_lines,
       diff, content, packs, repo_rules
FROM review_files WHERE review_id = $1 ORDER BY path;

-- name: GetFile :one
SELECT path, old_path, change, is_binary, skip_reason, additions, deletions, changed_lines,
       diff, content, packs, repo_rules
FROM review_files WHERE review_id = $1 AND path = $2;

-- name: GetFiles :many
SELECT path, old_path, change, is_binary, skip_reason, additions, deletions, changed_lines,
       diff, content, packs, repo_rules
FROM review_files WHERE review_id = @review_id AND path = ANY(@paths::text[]);

-- name: SetFilesPacks :exec
-- packs maps each path to the packs its intent prompt used. The rows are
-- locked in path order (lockorder.go); the commit does not wait for the
-- WAL flush (store/claims.go: item progress).
WITH progress AS (
    SELECT set_config('synchronous_commit', 'off', true) AS commit_mode
), target AS (
    SELECT t.path FROM review_files t
    WHERE t.review_id = @review_id AND t.path IN (SELECT jsonb_object_keys(@packs::jsonb))
    ORDER BY t.path COLLATE "C" FOR UPDATE
)
UPDATE review_files SET packs = ARRAY(SELECT jsonb_array_elements_text(@packs::jsonb -> review_files.path))
FROM target, progress
WHERE review_files.review_id = @review_id AND review_files.path = target.path;

-- name: ListFileSummaries :many
SELECT path, old_path, change, skip_reason, additions, deletions
FROM review_files WHERE review_id = $1 ORDER BY path;

-- name: CountReviewsByStatus :many
SELECT status, count(*) AS n FROM reviews GROUP BY status;

-- name: CopyReviewFiles :copyfrom
INSERT INTO review_files (review_id, path, old_path, change, is_binary, skip_reason, additions,
                          deletions, changed_lines, diff, content, packs, repo_rules)
VALUES (@review_id, @path, @old_path, @change, @is_binary, @skip_reason, @additions,
        @deletions, @changed_lines, @diff, @content, @packs, @repo_rules);
