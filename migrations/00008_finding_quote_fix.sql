-- +goose Up
-- The code a finding is about, quoted by the model and checked against the
-- head version (empty when it could not be found there), and the fix the
-- model proposes as a unified diff against the head version (empty when
-- none, or when it does not apply).
ALTER TABLE findings ADD COLUMN quote text NOT NULL DEFAULT '';
ALTER TABLE findings ADD COLUMN fix_diff text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE findings DROP COLUMN IF EXISTS fix_diff;
ALTER TABLE findings DROP COLUMN IF EXISTS quote;
