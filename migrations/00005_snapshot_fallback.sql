-- +goose Up
-- Why a worker could not give the expert the review's whole head tree and
-- fell back to the changed files stored with the review (empty when it did
-- not fall back).
ALTER TABLE reviews ADD COLUMN snapshot_fallback text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE reviews DROP COLUMN IF EXISTS snapshot_fallback;
