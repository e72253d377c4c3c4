-- +goose Up
-- The reconciler pages through pending ledger items in primary-key order
-- (keyset pagination); the old partial index on (status, updated_at) served
-- none of its queries.
DROP INDEX IF EXISTS stage_items_pending_idx;
CREATE INDEX stage_items_pending_idx ON stage_items (review_id, stage, item_key) WHERE status = 'pending';

-- Who runs an item: the worker (whose heartbeat lives in Redis), the claim
-- of the run (only that run may close the item), and the generation of the
-- item's task: when a dead worker's item is handed to another worker the
-- generation goes up, and a delivery of an older generation does nothing.
ALTER TABLE stage_items
    ADD COLUMN worker_id  text,
    ADD COLUMN claim      uuid,
    ADD COLUMN claimed_at timestamptz,
    ADD COLUMN generation integer NOT NULL DEFAULT 0;
CREATE INDEX stage_items_claimed_idx ON stage_items (worker_id) WHERE status = 'pending' AND worker_id IS NOT NULL;

-- +goose Down
DROP INDEX IF EXISTS stage_items_claimed_idx;
ALTER TABLE stage_items
    DROP COLUMN IF EXISTS generation,
    DROP COLUMN IF EXISTS claimed_at,
    DROP COLUMN IF EXISTS claim,
    DROP COLUMN IF EXISTS worker_id;
DROP INDEX IF EXISTS stage_items_pending_idx;
CREATE INDEX stage_items_pending_idx ON stage_items (status, updated_at) WHERE status = 'pending';
