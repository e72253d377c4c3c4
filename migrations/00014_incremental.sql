-- +goose Up
-- Incremental re-review. A finding's fingerprint identifies it across
-- reviews of the same change line (path, enclosing symbol, risk type,
-- normalised claim; see internal/fingerprint). A finding copied from an
-- earlier review because its file did not change keeps a reference to the
-- one it was copied from; a finding a later review no longer raises on a
-- file it re-reviewed is resolved by that review.
ALTER TABLE findings ADD COLUMN fingerprint text NOT NULL DEFAULT '';
ALTER TABLE findings ADD COLUMN carried_from bigint REFERENCES findings(id) ON DELETE SET NULL;
ALTER TABLE findings ADD COLUMN resolved_in uuid REFERENCES reviews(id) ON DELETE SET NULL;
CREATE INDEX findings_fingerprint_idx ON findings (fingerprint);
-- Foreign keys are indexed so deleting a finding or a review (prune) does
-- not scan findings; resolved_in is also how a review's report finds the
-- findings it resolved.
CREATE INDEX findings_carried_from_idx ON findings (carried_from) WHERE carried_from IS NOT NULL;
CREATE INDEX findings_resolved_in_idx ON findings (resolved_in) WHERE resolved_in IS NOT NULL;

-- The review a review was made incrementally against (--since), and the
-- change line it belongs to (a pull request, "" when none): the newest
-- finished review of the same repository and change line is the default
-- base of the next incremental review.
ALTER TABLE reviews ADD COLUMN since_review uuid REFERENCES reviews(id) ON DELETE SET NULL;
ALTER TABLE reviews ADD COLUMN change_key text NOT NULL DEFAULT '';
CREATE INDEX reviews_since_review_idx ON reviews (since_review) WHERE since_review IS NOT NULL;
CREATE INDEX reviews_change_key_idx ON reviews (repo, change_key, created_at) WHERE change_key <> '';

-- Per-file result keys: a file whose key (head content, its diff, prompt
-- set, models) is the same in a later review is not reviewed again there.
CREATE TABLE file_results (
    review_id  uuid NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    path       text NOT NULL,
    key        text NOT NULL,
    carried    boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (review_id, path)
);
CREATE INDEX file_results_key_idx ON file_results (key);

-- Repository configuration (.reviewfleet.yaml at the head revision): what
-- it says for each changed file, and the invalid files it held.
ALTER TABLE review_files ADD COLUMN repo_rules jsonb NOT NULL DEFAULT '{}';
ALTER TABLE reviews ADD COLUMN config_warnings jsonb NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE reviews DROP COLUMN IF EXISTS config_warnings;
ALTER TABLE review_files DROP COLUMN IF EXISTS repo_rules;
DROP TABLE IF EXISTS file_results;
DROP INDEX IF EXISTS reviews_since_review_idx;
DROP INDEX IF EXISTS reviews_change_key_idx;
ALTER TABLE reviews DROP COLUMN IF EXISTS change_key;
ALTER TABLE reviews DROP COLUMN IF EXISTS since_review;
DROP INDEX IF EXISTS findings_resolved_in_idx;
DROP INDEX IF EXISTS findings_carried_from_idx;
DROP INDEX IF EXISTS findings_fingerprint_idx;
ALTER TABLE findings DROP COLUMN IF EXISTS resolved_in;
ALTER TABLE findings DROP COLUMN IF EXISTS carried_from;
ALTER TABLE findings DROP COLUMN IF EXISTS fingerprint;
