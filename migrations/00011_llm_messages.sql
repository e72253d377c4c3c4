-- +goose Up
-- Recorded LLM exchanges, stored once by content. Every expert round
-- resends all earlier messages, so storing each call's whole request grew
-- with the square of the rounds. Now each message, the rest of the request
-- (model, tools, tool choice, response format, sampling settings) and each
-- reply is a row of llm_messages keyed by the SHA-256 of its canonical
-- JSON, and a call refers to them. Rows recorded before keep their
-- request and response columns; llm_exchanges shows both kinds alike.

CREATE TABLE llm_messages (
    hash     text PRIMARY KEY,          -- hex SHA-256 of body's canonical JSON
    kind     text NOT NULL CHECK (kind IN ('message', 'params', 'reply')),
    body     jsonb NOT NULL,
    -- when a call last stored it (refreshed at most hourly): deleting
    -- unreferenced rows spares recent ones, which a call being recorded
    -- may be about to refer to.
    seen_at  timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE llm_calls
    ADD COLUMN message_hashes text[],  -- the request's messages, in order
    ADD COLUMN params_hash    text,    -- the request without its messages
    ADD COLUMN reply_hash     text;    -- the decoded reply

-- llm_request rebuilds a call's full request body.
-- +goose StatementBegin
CREATE FUNCTION llm_request(c llm_calls) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN c.params_hash IS NULL THEN c.request
        ELSE (SELECT body FROM llm_messages WHERE hash = c.params_hash) || jsonb_build_object('messages',
              coalesce((SELECT jsonb_agg(m.body ORDER BY o.n)
                        FROM unnest(c.message_hashes) WITH ORDINALITY AS o(hash, n)
                        JOIN llm_messages m ON m.hash = o.hash), '[]'::jsonb))
    END
$$;
-- +goose StatementEnd

-- llm_exchanges: every recorded call with its full request and reply.
CREATE VIEW llm_exchanges AS
SELECT c.id, c.review_id, c.stage, c.item_key, c.model, c.prompt_hash, c.status, c.error,
       c.tokens_in, c.tokens_out, c.latency_ms, c.created_at, c.started_at, c.cost, c.endpoint,
       llm_request(c) AS request,
       coalesce(c.response, (SELECT body FROM llm_messages WHERE hash = c.reply_hash)) AS response
FROM llm_calls c;

-- +goose Down
DROP VIEW IF EXISTS llm_exchanges;
UPDATE llm_calls c SET request = llm_request(c) WHERE c.request IS NULL AND c.params_hash IS NOT NULL;
UPDATE llm_calls c SET response = m.body FROM llm_messages m WHERE c.response IS NULL AND m.hash = c.reply_hash;
DROP FUNCTION IF EXISTS llm_request(llm_calls);
ALTER TABLE llm_calls DROP COLUMN IF EXISTS reply_hash, DROP COLUMN IF EXISTS params_hash, DROP COLUMN IF EXISTS message_hashes;
DROP TABLE IF EXISTS llm_messages;
