-- +goose Up
-- Expert tool health. Every repository tool call of an expert run is kept
-- with what it gave the model: hit (content), empty (it ran and found
-- nothing), refused (sandbox policy, budgets), error, timeout. A search
-- tool that stops finding anything then shows as a run of "empty" rows
-- instead of looking like a quiet codebase. Rows stay few (a run makes at
-- most some tens of calls) and small: the arguments are redacted and cut
-- to 240 bytes by the runtime, the tool name to 64.
CREATE TABLE expert_tool_calls (
    id           bigserial PRIMARY KEY,
    review_id    uuid NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    finding_id   bigint NOT NULL REFERENCES findings(id) ON DELETE CASCADE,
    round        integer NOT NULL,
    seq          integer NOT NULL,
    tool         text NOT NULL CHECK (octet_length(tool) <= 64),
    args         text NOT NULL DEFAULT '' CHECK (octet_length(args) <= 240),
    outcome      text NOT NULL CHECK (outcome IN ('hit', 'empty', 'refused', 'error', 'timeout')),
    result_bytes integer NOT NULL DEFAULT 0,
    latency_ms   integer NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now(),
    -- A run is stored once (expert_runs is unique by finding); a second
    -- delivery of the same item adds nothing.
    UNIQUE (finding_id, seq)
);
-- Per-review questions, and deleting a review without a scan.
CREATE INDEX expert_tool_calls_review_idx ON expert_tool_calls (review_id);

-- The same calls counted per run by tool and outcome,
-- {"grep": {"hit": 3, "empty": 1}, …}: what reports and status show, and
-- what a finding carried into a later review keeps.
ALTER TABLE expert_runs ADD COLUMN tool_outcomes jsonb NOT NULL DEFAULT '{}';

-- expert_tool_health: one row per expert tool call, for analysts (see
-- docs/sql.md). Columns are only ever added at the end.
CREATE VIEW expert_tool_health AS
SELECT c.review_id,
       r.repo,
       r.created_at    AS reviewed_at,
       c.finding_id,
       f.risk_type,
       f.file,
       c.round,
       c.seq,
       c.tool,
       c.args,
       c.outcome,
       c.result_bytes,
       c.latency_ms,
       c.created_at
FROM expert_tool_calls c
JOIN reviews r ON r.id = c.review_id
JOIN findings f ON f.id = c.finding_id;

-- The analyst role (created by 00012 when the migrating user could) reads
-- the new view like the others.
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'reviewfleet_analyst') THEN
        GRANT SELECT ON expert_tool_health TO reviewfleet_analyst;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP VIEW IF EXISTS expert_tool_health;
ALTER TABLE expert_runs DROP COLUMN IF EXISTS tool_outcomes;
DROP TABLE IF EXISTS expert_tool_calls;
