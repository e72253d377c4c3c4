-- +goose Up
-- True outcomes: a review that finished with failed items says so, and an
-- LLM call is recorded before it is sent (status 'started') and completed
-- after, so a worker that dies mid-call still leaves its call counted.

ALTER TABLE reviews
    ADD COLUMN incomplete   boolean NOT NULL DEFAULT false,  -- done, but some items could not be reviewed
    ADD COLUMN failed_items integer NOT NULL DEFAULT 0;      -- how many ledger items failed

ALTER TABLE llm_calls
    ADD COLUMN started_at  timestamptz,                      -- when the client started the request
    ADD COLUMN finished_at timestamptz;                      -- NULL while the call is 'started'
CREATE INDEX llm_calls_started_idx ON llm_calls (review_id) WHERE status = 'started';

-- +goose Down
DROP INDEX IF EXISTS llm_calls_started_idx;
ALTER TABLE llm_calls DROP COLUMN IF EXISTS finished_at, DROP COLUMN IF EXISTS started_at;
ALTER TABLE reviews DROP COLUMN IF EXISTS failed_items, DROP COLUMN IF EXISTS incomplete;
