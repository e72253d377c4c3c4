-- +goose Up
-- A webhook payload is remembered by its SHA-256: the same signed body
-- sent again under another X-GitHub-Delivery id is a replay (or the same
-- event from a second hook), and must not start a second review. NULL for
-- deliveries stored before, which NULLs never collide with.
ALTER TABLE webhook_deliveries ADD COLUMN payload_sha256 bytea;
CREATE UNIQUE INDEX webhook_deliveries_payload ON webhook_deliveries (payload_sha256);

-- +goose Down
DROP INDEX IF EXISTS webhook_deliveries_payload;
ALTER TABLE webhook_deliveries DROP COLUMN IF EXISTS payload_sha256;
