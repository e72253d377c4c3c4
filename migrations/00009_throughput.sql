-- +goose Up
-- Throughput: items skipped because their review's LLM budget was spent,
-- item timings written where they happen, and the estimated cost of each
-- call and review.

ALTER TABLE stage_items DROP CONSTRAINT IF EXISTS stage_items_status_check;
ALTER TABLE stage_items ADD CONSTRAINT stage_items_status_check
    CHECK (status IN ('pending', 'done', 'failed', 'skipped_budget'));
ALTER TABLE stage_items
    ADD COLUMN queued_at   timestamptz,   -- when the task that last started it was handed to the queue
    ADD COLUMN started_at  timestamptz,   -- when a handler last started the item
    ADD COLUMN finished_at timestamptz;   -- when the item was closed

ALTER TABLE llm_calls
    ADD COLUMN cost     double precision NOT NULL DEFAULT 0,  -- estimated USD, from llm.prices
    ADD COLUMN endpoint text NOT NULL DEFAULT '';             -- the llm.endpoints member that answered

ALTER TABLE reviews
    ADD COLUMN skipped_budget integer NOT NULL DEFAULT 0,   -- items skipped: the LLM budget was spent
    ADD COLUMN cost double precision NOT NULL DEFAULT 0;    -- estimated USD of all its calls

-- +goose Down
ALTER TABLE reviews DROP COLUMN IF EXISTS cost, DROP COLUMN IF EXISTS skipped_budget;
ALTER TABLE llm_calls DROP COLUMN IF EXISTS endpoint, DROP COLUMN IF EXISTS cost;
ALTER TABLE stage_items DROP COLUMN IF EXISTS finished_at, DROP COLUMN IF EXISTS started_at, DROP COLUMN IF EXISTS queued_at;
UPDATE stage_items SET status = 'failed' WHERE status = 'skipped_budget';
ALTER TABLE stage_items DROP CONSTRAINT IF EXISTS stage_items_status_check;
ALTER TABLE stage_items ADD CONSTRAINT stage_items_status_check
    CHECK (status IN ('pending', 'done', 'failed'));
