-- +goose Up
-- Bulk reviews: batches with their entries, admission control (queued
-- reviews get their deadline when they start), the interactive/bulk split
-- that fairness needs, and the key that finds an identical earlier review.

ALTER TABLE batches
    ADD COLUMN source        text NOT NULL DEFAULT '',        -- manifest path, github org, schedule
    ADD COLUMN status        text NOT NULL DEFAULT 'submitting'
                             CHECK (status IN ('submitting', 'submitted', 'cancelled')),
    ADD COLUMN labels        jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN max_running   integer NOT NULL DEFAULT 0,      -- 0: bulk.max_running_per_batch
    ADD COLUMN entries       integer NOT NULL DEFAULT 0,
    ADD COLUMN submitted     integer NOT NULL DEFAULT 0,      -- entries with a review (new or linked)
    ADD COLUMN duplicates    integer NOT NULL DEFAULT 0,      -- entries linked to an identical review
    ADD COLUMN submit_errors integer NOT NULL DEFAULT 0,      -- entries that could not be submitted
    ADD COLUMN submitted_at  timestamptz,
    ADD COLUMN cancelled_at  timestamptz;

CREATE TABLE batch_reviews (
    batch_id    uuid NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
    line        integer NOT NULL,                              -- manifest line (or listing position)
    repo        text NOT NULL,                                 -- credentials stripped
    base_ref    text NOT NULL DEFAULT '',
    head_ref    text NOT NULL DEFAULT '',
    labels      jsonb NOT NULL DEFAULT '{}',
    dedupe_key  text NOT NULL DEFAULT '',
    review_id   uuid REFERENCES reviews(id) ON DELETE SET NULL,
    duplicate   boolean NOT NULL DEFAULT false,                -- review_id is an earlier, identical review
    error       text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (batch_id, line)
);
CREATE INDEX batch_reviews_review_idx ON batch_reviews (review_id);

ALTER TABLE reviews
    ADD COLUMN kind       text NOT NULL DEFAULT 'interactive' CHECK (kind IN ('interactive', 'bulk')),
    ADD COLUMN timeout_ms bigint NOT NULL DEFAULT 0,           -- deadline_at = start + timeout
    ADD COLUMN dedupe_key text NOT NULL DEFAULT '';
CREATE INDEX reviews_queued_idx ON reviews (created_at) WHERE status = 'queued';
CREATE INDEX reviews_running_batch_idx ON reviews (batch_id) WHERE status = 'running';
CREATE INDEX reviews_dedupe_idx ON reviews (dedupe_key) WHERE dedupe_key <> '';

-- +goose Down
DROP INDEX IF EXISTS reviews_dedupe_idx;
DROP INDEX IF EXISTS reviews_running_batch_idx;
DROP INDEX IF EXISTS reviews_queued_idx;
ALTER TABLE reviews DROP COLUMN IF EXISTS dedupe_key, DROP COLUMN IF EXISTS timeout_ms, DROP COLUMN IF EXISTS kind;
DROP TABLE IF EXISTS batch_reviews;
ALTER TABLE batches
    DROP COLUMN IF EXISTS cancelled_at, DROP COLUMN IF EXISTS submitted_at, DROP COLUMN IF EXISTS submit_errors,
    DROP COLUMN IF EXISTS duplicates, DROP COLUMN IF EXISTS submitted, DROP COLUMN IF EXISTS entries,
    DROP COLUMN IF EXISTS max_running, DROP COLUMN IF EXISTS labels, DROP COLUMN IF EXISTS status,
    DROP COLUMN IF EXISTS source;
