-- +goose Up
-- Core schema: one row per review, the files it covers, the fan-out/fan-in
-- ledger, findings and the verdict trail, LLM calls, expert runs and reports.

CREATE TABLE batches (
    id          uuid PRIMARY KEY,
    name        text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE reviews (
    id              uuid PRIMARY KEY,
    batch_id        uuid REFERENCES batches(id) ON DELETE SET NULL,
    repo            text NOT NULL,
    source          text NOT NULL,                       -- git | diff | url
    base_ref        text NOT NULL DEFAULT '',
    head_ref        text NOT NULL DEFAULT '',
    base_sha        text NOT NULL DEFAULT '',
    head_sha        text NOT NULL DEFAULT '',
    snapshot        text NOT NULL DEFAULT '',            -- where workers find the head tree
    purpose         text NOT NULL DEFAULT '',            -- the change's stated purpose (commit messages, PR text)
    status          text NOT NULL DEFAULT 'queued'
                    CHECK (status IN ('queued', 'running', 'done', 'failed')),
    stage           text NOT NULL DEFAULT 'intent',
    intent_mode     text NOT NULL DEFAULT 'per_file'
                    CHECK (intent_mode IN ('per_file', 'chunked')),
    skipped_stages  text[] NOT NULL DEFAULT '{}',
    config          jsonb NOT NULL DEFAULT '{}',
    error           text NOT NULL DEFAULT '',
    llm_calls       integer NOT NULL DEFAULT 0,
    tokens_in       bigint NOT NULL DEFAULT 0,
    tokens_out      bigint NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL DEFAULT now(),
    started_at      timestamptz,
    stage_started_at timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    deadline_at     timestamptz NOT NULL
);
CREATE INDEX reviews_status_idx ON reviews (status, created_at);
CREATE INDEX reviews_repo_idx ON reviews (repo, created_at);

CREATE TABLE review_files (
    review_id    uuid NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    path         text NOT NULL,
    old_path     text NOT NULL DEFAULT '',
    change       text NOT NULL,                          -- added | deleted | modified | renamed | copied
    is_binary    boolean NOT NULL DEFAULT false,
    skip_reason  text NOT NULL DEFAULT '',               -- empty when the file is reviewed
    additions    integer NOT NULL DEFAULT 0,
    deletions    integer NOT NULL DEFAULT 0,
    changed_lines integer[] NOT NULL DEFAULT '{}',       -- new-side lines touched by the change
    diff         text NOT NULL DEFAULT '',
    content      text,                                   -- head-side content; NULL when absent
    packs        text[] NOT NULL DEFAULT '{}',           -- progressive-context packs selected
    PRIMARY KEY (review_id, path)
);

CREATE TABLE stage_items (
    review_id   uuid NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    stage       text NOT NULL,
    item_key    text NOT NULL,
    status      text NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'done', 'failed')),
    payload     jsonb NOT NULL DEFAULT '{}',
    attempts    integer NOT NULL DEFAULT 0,
    error       text NOT NULL DEFAULT '',
    enqueued_at timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (review_id, stage, item_key)
);
CREATE INDEX stage_items_pending_idx ON stage_items (status, updated_at) WHERE status = 'pending';

CREATE TABLE findings (
    id            bigserial PRIMARY KEY,
    review_id     uuid NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    origin        text NOT NULL,                          -- intent item key that raised it
    ordinal       integer NOT NULL,                       -- position in that item's reply
    risk_type     text NOT NULL,
    file          text NOT NULL,
    line_start    integer NOT NULL,
    line_end      integer NOT NULL,
    description   text NOT NULL,
    suggestion    text NOT NULL DEFAULT '',
    severity      text NOT NULL,
    confidence_initial double precision NOT NULL,
    confidence    double precision NOT NULL,
    status        text NOT NULL DEFAULT 'active'
                  CHECK (status IN ('active', 'dropped', 'merged', 'failed')),
    drop_reason   text NOT NULL DEFAULT '',
    merged_into   bigint REFERENCES findings(id) ON DELETE SET NULL,
    score         double precision NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (review_id, origin, ordinal)
);
CREATE INDEX findings_review_idx ON findings (review_id);

CREATE TABLE verdicts (
    id                bigserial PRIMARY KEY,
    review_id         uuid NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    finding_id        bigint NOT NULL REFERENCES findings(id) ON DELETE CASCADE,
    stage             text NOT NULL,
    verdict           text NOT NULL,
    confidence_before double precision NOT NULL,
    confidence_after  double precision NOT NULL,
    reason            text NOT NULL DEFAULT '',
    evidence          jsonb NOT NULL DEFAULT '[]',
    model             text NOT NULL DEFAULT '',
    tokens_in         integer NOT NULL DEFAULT 0,
    tokens_out        integer NOT NULL DEFAULT 0,
    latency_ms        integer NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (finding_id, stage)
);
CREATE INDEX verdicts_review_idx ON verdicts (review_id, stage);

CREATE TABLE expert_runs (
    id           bigserial PRIMARY KEY,
    review_id    uuid NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    finding_id   bigint NOT NULL UNIQUE REFERENCES findings(id) ON DELETE CASCADE,
    stop_reason  text NOT NULL,
    rounds       integer NOT NULL DEFAULT 0,
    tool_calls   jsonb NOT NULL DEFAULT '{}',
    phases       jsonb NOT NULL DEFAULT '[]',
    checks       jsonb NOT NULL DEFAULT '[]',
    tokens_in    integer NOT NULL DEFAULT 0,
    tokens_out   integer NOT NULL DEFAULT 0,
    duration_ms  integer NOT NULL DEFAULT 0,
    error        text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE llm_calls (
    id           bigserial PRIMARY KEY,
    review_id    uuid REFERENCES reviews(id) ON DELETE CASCADE,
    stage        text NOT NULL,
    item_key     text NOT NULL DEFAULT '',
    model        text NOT NULL,
    prompt_hash  text NOT NULL,
    status       text NOT NULL,
    error        text NOT NULL DEFAULT '',
    tokens_in    integer NOT NULL DEFAULT 0,
    tokens_out   integer NOT NULL DEFAULT 0,
    latency_ms   integer NOT NULL DEFAULT 0,
    request      jsonb,
    response     jsonb,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX llm_calls_review_idx ON llm_calls (review_id, stage);
CREATE INDEX llm_calls_prompt_idx ON llm_calls (prompt_hash);

CREATE TABLE eval_summaries (
    review_id   uuid NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    risk_type   text NOT NULL,
    confirmed   integer NOT NULL DEFAULT 0,
    disputed    integer NOT NULL DEFAULT 0,
    uncertain   integer NOT NULL DEFAULT 0,
    PRIMARY KEY (review_id, risk_type)
);

-- json (not jsonb) keeps the documents byte for byte as rendered, key order
-- included, while ->, ->> and json_array_elements still query them.
CREATE TABLE reports (
    review_id   uuid PRIMARY KEY REFERENCES reviews(id) ON DELETE CASCADE,
    markdown    text NOT NULL,
    json        json NOT NULL,
    sarif       json NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- finding_history: one row per finding with its whole verdict trail, for
-- analysts ("which risk types does the eval gate dispute most?").
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

-- review_costs: LLM usage per review, for "cost per repo last month".
CREATE VIEW review_costs AS
SELECT r.id AS review_id, r.repo, r.created_at,
       count(c.id)                  AS llm_calls,
       coalesce(sum(c.tokens_in), 0)  AS tokens_in,
       coalesce(sum(c.tokens_out), 0) AS tokens_out,
       coalesce(sum(c.latency_ms), 0) AS latency_ms
FROM reviews r
LEFT JOIN llm_calls c ON c.review_id = r.id
GROUP BY r.id, r.repo, r.created_at;

-- +goose Down
DROP VIEW IF EXISTS review_costs;
DROP VIEW IF EXISTS finding_history;
DROP TABLE IF EXISTS reports;
DROP TABLE IF EXISTS eval_summaries;
DROP TABLE IF EXISTS llm_calls;
DROP TABLE IF EXISTS expert_runs;
DROP TABLE IF EXISTS verdicts;
DROP TABLE IF EXISTS findings;
DROP TABLE IF EXISTS stage_items;
DROP TABLE IF EXISTS review_files;
DROP TABLE IF EXISTS reviews;
DROP TABLE IF EXISTS batches;
