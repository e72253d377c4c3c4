-- +goose Up
-- The web console (reviewfleet console): the indexes its pages need to
-- stay fast with tens of thousands of reviews and millions of findings,
-- and a read-only role, reviewfleet_console, that may read what the pages
-- show and nothing else (see docs/console.md).

-- Keyset pagination of the review lists (newest first, ties broken by id)
-- walks reviews_created_idx (00012) and sorts the rare ties; a repository's
-- reviews walk reviews_repo_idx (00001).
-- Throughput over the last hour and recent failures on the fleet page.
CREATE INDEX reviews_finished_idx ON reviews (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX llm_calls_created_idx ON llm_calls (created_at);
CREATE INDEX stage_items_failed_idx ON stage_items (finished_at) WHERE status = 'failed';
-- Keyset pagination of the batch list.
CREATE INDEX batches_created_id_idx ON batches (created_at DESC, id DESC);
-- A review page lists its findings by severity and place; the search
-- finds findings by file (prefix) and by the words of their description.
CREATE INDEX findings_file_idx ON findings (file text_pattern_ops);
CREATE INDEX findings_description_fts_idx ON findings USING gin (to_tsvector('simple', description));
-- Reported findings by severity, for the batch page's severity filter.
CREATE INDEX findings_review_active_idx ON findings (review_id, severity) WHERE status = 'active';

-- reviewfleet_console reads the tables the pages show. llm_calls is
-- granted column by column: the console counts calls, tokens, cost and
-- rate limits, and never reads the prompts and replies. Like
-- reviewfleet_analyst, the role belongs to the cluster and the grants to
-- this schema; a migrating user that may not create roles gets a warning
-- (docs/console.md shows what to run instead).
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'reviewfleet_console') THEN
        BEGIN
            CREATE ROLE reviewfleet_console NOLOGIN;
        EXCEPTION
            WHEN duplicate_object OR unique_violation THEN NULL;  -- created meanwhile elsewhere
            WHEN insufficient_privilege THEN
                RAISE WARNING 'cannot create role reviewfleet_console (%); create it and grant it as docs/console.md shows', SQLERRM;
                RETURN;
        END;
    END IF;
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO reviewfleet_console', current_schema());
    GRANT SELECT ON reviews, batches, batch_reviews, findings, verdicts, expert_runs, expert_tool_calls,
        stage_items, reports, review_pull_requests, review_files TO reviewfleet_console;
    GRANT SELECT (id, review_id, stage, model, status, error, tokens_in, tokens_out, latency_ms, cost, created_at)
        ON llm_calls TO reviewfleet_console;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'reviewfleet_console') THEN
        REVOKE SELECT ON reviews, batches, batch_reviews, findings, verdicts, expert_runs, expert_tool_calls,
            stage_items, reports, review_pull_requests, review_files FROM reviewfleet_console;
        REVOKE SELECT (id, review_id, stage, model, status, error, tokens_in, tokens_out, latency_ms, cost, created_at)
            ON llm_calls FROM reviewfleet_console;
        EXECUTE format('REVOKE USAGE ON SCHEMA %I FROM reviewfleet_console', current_schema());
    END IF;
END
$$;
-- +goose StatementEnd
DROP INDEX IF EXISTS findings_review_active_idx;
DROP INDEX IF EXISTS findings_description_fts_idx;
DROP INDEX IF EXISTS findings_file_idx;
DROP INDEX IF EXISTS batches_created_id_idx;
DROP INDEX IF EXISTS stage_items_failed_idx;
DROP INDEX IF EXISTS llm_calls_created_idx;
DROP INDEX IF EXISTS reviews_finished_idx;
