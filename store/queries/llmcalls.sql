-- name: StartLLMCall :one
-- The request's parts not stored yet are stored in the same statement
-- (one round trip, one commit); seen_at as in StoreMessages. The commit
-- does not wait for the WAL flush (store/claims.go: item progress).
WITH progress AS (
	SELECT set_config('synchronous_commit', 'off', true) AS commit_mode
), parts AS (
	INSERT INTO llm_messages (hash, kind, body)
	SELECT unnest(@hashes::text[]), unnest(@kinds::text[]), unnest(@bodies::text[])::jsonb
	ON CONFLICT (hash) DO UPDATE SET seen_at = now()
	WHERE llm_messages.seen_at < now() - '1 hour'::interval
)
INSERT INTO llm_calls (review_id, stage, item_key, model, prompt_hash, status, message_hashes, params_hash,
                       started_at, endpoint)
SELECT sqlc.narg(review_id), @stage, @item_key, @model, @prompt_hash, 'started', @message_hashes::text[], sqlc.narg(params_hash),
       coalesce(sqlc.narg(started_at)::timestamptz, now()), @endpoint
FROM progress
RETURNING id;

-- name: FinishLLMCall :exec
-- The reply is stored, once by content, in the same statement. The
-- commit does not wait for the WAL flush (store/claims.go: item progress).
WITH progress AS (
	SELECT set_config('synchronous_commit', 'off', true) AS commit_mode
), parts AS (
	INSERT INTO llm_messages (hash, kind, body)
	SELECT unnest(@hashes::text[]), unnest(@kinds::text[]), unnest(@bodies::text[])::jsonb
	ON CONFLICT (hash) DO UPDATE SET seen_at = now()
	WHERE llm_messages.seen_at < now() - '1 hour'::interval
)
UPDATE llm_calls SET status = @status, error = @error, tokens_in = @tokens_in, tokens_out = @tokens_out,
       latency_ms = @latency_ms, reply_hash = sqlc.narg(reply_hash), finished_at = now(), cost = @cost
FROM progress
WHERE id = @id;

-- name: InsertLLMCall :exec
INSERT INTO llm_calls (review_id, stage, item_key, model, prompt_hash, status, error,
                       tokens_in, tokens_out, latency_ms, message_hashes, params_hash, reply_hash,
                       started_at, finished_at, cost, endpoint)
VALUES (sqlc.narg(review_id), @stage, @item_key, @model, @prompt_hash, @status, @error,
        @tokens_in, @tokens_out, @latency_ms, @message_hashes, sqlc.narg(params_hash), sqlc.narg(reply_hash),
        coalesce(sqlc.narg(started_at)::timestamptz, now()), now(), @cost, @endpoint);

-- name: ReserveLLMCall :one
-- A review's own limits (its configuration snapshot) win over the
-- defaults given; 0 is no limit. The call counts only when it fits. The
-- commit does not wait for the WAL flush (store/claims.go: item progress).
WITH progress AS (
	SELECT set_config('synchronous_commit', 'off', true) AS commit_mode
), lim AS (
	SELECT coalesce((l.config->'LLM'->>'MaxCallsPerReview')::int, @max_calls::int) AS calls,
	       coalesce((l.config->'LLM'->>'MaxTokensPerReview')::bigint, @max_tokens::bigint) AS tokens
	FROM reviews l WHERE l.id = @review_id
), upd AS (
	UPDATE reviews r SET llm_calls = r.llm_calls + 1 FROM lim, progress
	WHERE r.id = @review_id AND (lim.calls = 0 OR r.llm_calls < lim.calls)
	  AND (lim.tokens = 0 OR r.tokens_in + r.tokens_out + @est_tokens::bigint <= lim.tokens)
	RETURNING r.id
)
SELECT lim.calls::int AS cap_calls, lim.tokens::bigint AS cap_tokens, r.llm_calls AS calls,
       (r.tokens_in + r.tokens_out)::bigint AS tokens, EXISTS (SELECT 1 FROM upd) AS reserved
FROM lim, reviews r WHERE r.id = @review_id;

-- name: ListLLMReplies :many
SELECT c.stage, c.item_key, c.prompt_hash, c.status, coalesce(c.response, m.body)::jsonb AS response
FROM llm_calls c LEFT JOIN llm_messages m ON m.hash = c.reply_hash
WHERE c.review_id = @review_id::uuid AND coalesce(c.response, m.body) IS NOT NULL
ORDER BY c.id;

-- name: ListLLMCalls :many
SELECT id, stage, item_key, model, prompt_hash, status, error, tokens_in, tokens_out, latency_ms,
       coalesce(request, 'null')::jsonb AS request, coalesce(response, 'null')::jsonb AS response,
       created_at, coalesce(started_at, created_at)::timestamptz AS started_at, cost, endpoint
FROM llm_exchanges WHERE review_id = @review_id::uuid ORDER BY id;

-- name: StoreMessages :exec
-- seen_at is refreshed at most hourly: pruning spares recent rows, which
-- a call being recorded may be about to refer to.
INSERT INTO llm_messages (hash, kind, body)
SELECT unnest(@hashes::text[]), unnest(@kinds::text[]), unnest(@bodies::text[])::jsonb
ON CONFLICT (hash) DO UPDATE SET seen_at = now()
WHERE llm_messages.seen_at < now() - '1 hour'::interval;

-- name: MeasureExchanges :one
WITH calls AS (
	SELECT c.message_hashes, c.params_hash, c.reply_hash, c.request, c.response FROM llm_calls c
	WHERE coalesce(cardinality(@review_ids::uuid[]), 0) = 0 OR c.review_id = ANY(@review_ids::uuid[])
), refs AS (
	SELECT unnest(calls.message_hashes) AS hash FROM calls
	UNION SELECT calls.params_hash FROM calls UNION SELECT calls.reply_hash FROM calls
)
SELECT (SELECT count(*) FROM llm_messages m JOIN refs ON refs.hash = m.hash)::bigint AS parts,
       (SELECT coalesce(sum(pg_column_size(m.body)), 0) FROM llm_messages m JOIN refs ON refs.hash = m.hash)::bigint AS part_bytes,
       (SELECT coalesce(sum(coalesce(pg_column_size(calls.request), 0) + coalesce(pg_column_size(calls.response), 0)), 0)
        FROM calls)::bigint AS inline_bytes;
