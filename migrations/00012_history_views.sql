-- +goose Up
-- Verdict history as a place to ask questions: documented views (see
-- docs/sql.md), a read-only role that can read them and nothing else, and
-- the indexes that deleting a review (foreign keys) and the documented
-- questions need.

-- Every foreign key gets an index that leads with its column, or deleting a
-- referenced row scans the referencing table once per deleted row: deleting
-- a review with a million findings scanned findings a million times for
-- merged_into. Mostly-NULL columns are indexed where they are set; the
-- foreign-key checks look up non-NULL values only.
CREATE INDEX findings_merged_into_idx ON findings (merged_into) WHERE merged_into IS NOT NULL;
CREATE INDEX expert_runs_review_idx ON expert_runs (review_id);
CREATE INDEX reviews_batch_idx ON reviews (batch_id) WHERE batch_id IS NOT NULL;
-- Time windows over the history ("last 30 days", "by month") and pruning.
CREATE INDEX reviews_created_idx ON reviews (created_at);
-- Calls made outside any review (judges) are pruned by age.
CREATE INDEX llm_calls_unowned_created_idx ON llm_calls (created_at) WHERE review_id IS NULL;
-- Verdict counts per stage and verdict (the refutation questions).
CREATE INDEX verdicts_stage_verdict_idx ON verdicts (stage, verdict);

-- finding_history: one row per finding with its whole verdict trail. The
-- first eighteen columns are those of the original view; the rest are new.
CREATE OR REPLACE VIEW finding_history AS
SELECT f.id            AS finding_id,
       r.id            AS review_id,
       r.repo,
       r.base_sha,
       r.head_sha,
       r.created_at    AS reviewed_at,
       f.risk_type,
       f.severity,
       f.file,
       f.line_start,
       f.line_end,
       f.description,
       f.status,
       f.confidence_initial,
       f.confidence    AS confidence_final,
       v_verify.verdict AS verify_verdict,
       v_expert.verdict AS expert_verdict,
       v_eval.verdict   AS eval_verdict,
       r.batch_id,
       r.kind          AS review_kind,
       f.drop_reason,
       f.merged_into,
       f.score,
       v_verify.confidence_after AS verify_confidence,
       v_expert.confidence_after AS expert_confidence,
       v_eval.confidence_after   AS eval_confidence,
       coalesce(v_expert.verdict = 'refuted' OR v_eval.verdict = 'disputed'
                OR v_verify.verdict = 'unanchored', false) AS rejected,
       (f.status = 'active') AS reported
FROM findings f
JOIN reviews r ON r.id = f.review_id
LEFT JOIN verdicts v_verify ON v_verify.finding_id = f.id AND v_verify.stage = 'verify'
LEFT JOIN verdicts v_expert ON v_expert.finding_id = f.id AND v_expert.stage = 'expert'
LEFT JOIN verdicts v_eval   ON v_eval.finding_id   = f.id AND v_eval.stage   = 'eval';

-- verdict_trail: one row per verdict, in the order the stages gave them.
-- Evidence is what the stage cited; prompts and replies are not here.
CREATE VIEW verdict_trail AS
SELECT v.id            AS verdict_id,
       v.review_id,
       r.repo,
       r.created_at    AS reviewed_at,
       v.finding_id,
       f.risk_type,
       f.severity,
       f.file,
       f.line_start,
       f.line_end,
       v.stage,
       v.verdict,
       v.confidence_before,
       v.confidence_after,
       v.confidence_after - v.confidence_before AS confidence_change,
       v.reason,
       v.evidence,
       v.model,
       v.tokens_in,
       v.tokens_out,
       v.latency_ms,
       v.created_at
FROM verdicts v
JOIN findings f ON f.id = v.finding_id
JOIN reviews r ON r.id = v.review_id;

-- review_costs: LLM usage per review. The first seven columns (from the
-- recorded calls) are those of the original view; the review's own
-- counters (cost_usd, review_*) survive pruning of the recorded calls.
CREATE OR REPLACE VIEW review_costs AS
SELECT r.id AS review_id, r.repo, r.created_at,
       c.llm_calls,
       c.tokens_in,
       c.tokens_out,
       c.latency_ms,
       r.status,
       r.kind,
       r.batch_id,
       r.cost                          AS cost_usd,
       r.llm_calls                     AS review_llm_calls,
       r.tokens_in                     AS review_tokens_in,
       r.tokens_out                    AS review_tokens_out,
       (extract(epoch FROM (r.finished_at - r.started_at)) * 1000)::bigint AS duration_ms,
       r.finished_at,
       (SELECT count(*) FROM findings f WHERE f.review_id = r.id AND f.status = 'active') AS findings_reported
FROM reviews r
-- Per review rather than one GROUP BY over all: a filter on any column of
-- reviews (a time window, a repository) then narrows the scan.
CROSS JOIN LATERAL (
    SELECT count(*)                       AS llm_calls,
           coalesce(sum(tokens_in), 0)    AS tokens_in,
           coalesce(sum(tokens_out), 0)   AS tokens_out,
           coalesce(sum(latency_ms), 0)   AS latency_ms
    FROM llm_calls WHERE review_id = r.id) c;

-- stage_latency: per review and stage, how long the stage's items took
-- (from the fan-out ledger) and how long its LLM calls waited.
CREATE VIEW stage_latency AS
SELECT i.review_id,
       r.repo,
       r.created_at    AS reviewed_at,
       i.stage,
       count(*)                                             AS items,
       count(*) FILTER (WHERE i.status = 'failed')          AS items_failed,
       count(*) FILTER (WHERE i.status = 'skipped_budget')  AS items_skipped_budget,
       min(i.started_at)                                    AS started_at,
       max(i.finished_at)                                   AS finished_at,
       (extract(epoch FROM (max(i.finished_at) - min(i.started_at))) * 1000)::bigint AS wall_ms,
       (extract(epoch FROM avg(i.finished_at - i.started_at)) * 1000)::bigint         AS item_avg_ms,
       (extract(epoch FROM max(i.finished_at - i.started_at)) * 1000)::bigint         AS item_max_ms,
       (extract(epoch FROM avg(i.started_at - i.queued_at)) * 1000)::bigint           AS queue_wait_avg_ms,
       coalesce((SELECT sum(c.latency_ms) FROM llm_calls c
                 WHERE c.review_id = i.review_id AND c.stage = i.stage), 0)          AS llm_latency_ms
FROM stage_items i
JOIN reviews r ON r.id = i.review_id
GROUP BY i.review_id, r.repo, r.created_at, i.stage;

-- repo_risk_trend: per repository, month (UTC) and risk type, how many
-- findings were raised, reported and rejected by a later stage.
CREATE VIEW repo_risk_trend AS
SELECT h.repo,
       date_trunc('month', h.reviewed_at AT TIME ZONE 'UTC')::date AS month,
       h.risk_type,
       count(DISTINCT h.review_id)                          AS reviews,
       count(*)                                             AS findings,
       count(*) FILTER (WHERE h.reported)                   AS reported,
       count(*) FILTER (WHERE h.rejected)                   AS rejected,
       count(*) FILTER (WHERE h.expert_verdict = 'confirmed' OR h.eval_verdict = 'confirmed') AS confirmed,
       round(avg(h.confidence_final)::numeric, 3)           AS avg_confidence
FROM finding_history h
GROUP BY h.repo, date_trunc('month', h.reviewed_at AT TIME ZONE 'UTC')::date, h.risk_type;

-- reviewfleet_analyst reads the views and nothing else: not the tables
-- (llm_calls holds raw prompts and replies), not the goose table, and it
-- cannot write. Roles belong to the whole cluster while the views belong
-- to this schema, so the role is created once (concurrent migrations of
-- other schemas may race to create it: losing that race is fine) and
-- granted what this schema holds. A migrating user that may not create
-- roles gets a warning instead of a failed migration; see docs/sql.md.
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'reviewfleet_analyst') THEN
        BEGIN
            CREATE ROLE reviewfleet_analyst NOLOGIN;
        EXCEPTION
            WHEN duplicate_object OR unique_violation THEN NULL;  -- created meanwhile elsewhere
            WHEN insufficient_privilege THEN
                RAISE WARNING 'cannot create role reviewfleet_analyst (%); create it and grant the views as docs/sql.md shows', SQLERRM;
                RETURN;
        END;
    END IF;
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO reviewfleet_analyst', current_schema());
    GRANT SELECT ON finding_history, verdict_trail, review_costs, stage_latency, repo_risk_trend
        TO reviewfleet_analyst;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- The role stays: it belongs to the cluster and other schemas may use it.
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'reviewfleet_analyst') THEN
        EXECUTE format('REVOKE USAGE ON SCHEMA %I FROM reviewfleet_analyst', current_schema());
    END IF;
END
$$;
-- +goose StatementEnd
DROP VIEW IF EXISTS repo_risk_trend;
DROP VIEW IF EXISTS stage_latency;
DROP VIEW IF EXISTS verdict_trail;
DROP VIEW IF EXISTS review_costs;
DROP VIEW IF EXISTS finding_history;
CREATE VIEW finding_history AS
SELECT f.id            AS finding_id,
       r.id            AS review_id,
       r.repo,
       r.base_sha,
       r.head_sha,
       r.created_at    AS reviewed_at,
       f.risk_type,
       f.severity,
       f.file,
       f.line_start,
       f.line_end,
       f.description,
       f.status,
       f.confidence_initial,
       f.confidence    AS confidence_final,
       v_verify.verdict AS verify_verdict,
       v_expert.verdict AS expert_verdict,
       v_eval.verdict   AS eval_verdict
FROM findings f
JOIN reviews r ON r.id = f.review_id
LEFT JOIN verdicts v_verify ON v_verify.finding_id = f.id AND v_verify.stage = 'verify'
LEFT JOIN verdicts v_expert ON v_expert.finding_id = f.id AND v_expert.stage = 'expert'
LEFT JOIN verdicts v_eval   ON v_eval.finding_id   = f.id AND v_eval.stage   = 'eval';
CREATE VIEW review_costs AS
SELECT r.id AS review_id, r.repo, r.created_at,
       count(c.id)                  AS llm_calls,
       coalesce(sum(c.tokens_in), 0)  AS tokens_in,
       coalesce(sum(c.tokens_out), 0) AS tokens_out,
       coalesce(sum(c.latency_ms), 0) AS latency_ms
FROM reviews r
LEFT JOIN llm_calls c ON c.review_id = r.id
GROUP BY r.id, r.repo, r.created_at;
DROP INDEX IF EXISTS verdicts_stage_verdict_idx;
DROP INDEX IF EXISTS llm_calls_unowned_created_idx;
DROP INDEX IF EXISTS reviews_created_idx;
DROP INDEX IF EXISTS reviews_batch_idx;
DROP INDEX IF EXISTS expert_runs_review_idx;
DROP INDEX IF EXISTS findings_merged_into_idx;
