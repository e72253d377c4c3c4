-- name: SetReviewPullRequest :exec
INSERT INTO review_pull_requests (review_id, host, owner, repo, number, head_sha)
VALUES (@review_id, @host, @owner, @repo, @number, @head_sha)
ON CONFLICT (review_id) DO UPDATE SET host = EXCLUDED.host, owner = EXCLUDED.owner,
	repo = EXCLUDED.repo, number = EXCLUDED.number, head_sha = EXCLUDED.head_sha;

-- name: ReviewPullRequest :one
SELECT host, owner, repo, number, head_sha FROM review_pull_requests WHERE review_id = @review_id;

-- name: GetGitHubPost :one
SELECT review_id, github_review_id, comments, posted_at, updated_at FROM github_posts
WHERE host = @host AND owner = @owner AND repo = @repo AND number = @number AND head_sha = @head_sha;

-- name: SaveGitHubPost :exec
INSERT INTO github_posts (host, owner, repo, number, head_sha, review_id, github_review_id, comments)
VALUES (@host, @owner, @repo, @number, @head_sha, @review_id, @github_review_id, @comments)
ON CONFLICT (host, owner, repo, number, head_sha) DO UPDATE SET review_id = EXCLUDED.review_id,
	github_review_id = EXCLUDED.github_review_id, comments = EXCLUDED.comments, updated_at = now();

-- name: TakeNamedLock :exec
-- The key is the name within the current schema, so that schemas sharing
-- a server (tests) do not block each other.
SELECT pg_advisory_lock(hashtextextended(coalesce(current_schema(), '') || ':' || @name::text, 0));

-- name: AddDelivery :execrows
INSERT INTO webhook_deliveries (id, event, action, host, owner, repo, number, head_sha, post, payload_sha256)
VALUES (@id, @event, @action, @host, @owner, @repo, @number, @head_sha, @post, @payload_sha256)
ON CONFLICT DO NOTHING;

-- name: ClaimDelivery :one
UPDATE webhook_deliveries SET status = 'working', updated_at = now()
WHERE id = (SELECT w.id FROM webhook_deliveries w
	WHERE (w.status = 'pending' AND w.not_before <= now()) OR (w.status = 'working' AND w.updated_at < now() - @stale::interval)
	ORDER BY w.received_at LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING *;

-- name: FinishDelivery :exec
UPDATE webhook_deliveries SET status = @status, review_id = coalesce(sqlc.narg(review_id)::uuid, review_id), note = @note,
	attempts = 0, not_before = now(), updated_at = now()
WHERE id = @id;

-- name: TouchDelivery :exec
UPDATE webhook_deliveries SET updated_at = now() WHERE id = @id AND status = 'working';

-- name: GetDelivery :one
SELECT * FROM webhook_deliveries WHERE id = @id;

-- name: DeliveriesToPost :many
SELECT sqlc.embed(d) FROM webhook_deliveries d JOIN reviews r ON r.id = d.review_id
WHERE d.status = 'submitted' AND d.post AND d.not_before <= now() AND r.status IN ('done', 'failed')
ORDER BY d.received_at LIMIT @max_deliveries;
