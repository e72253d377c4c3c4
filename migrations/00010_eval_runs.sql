-- +goose Up
-- Evaluation runs of `reviewfleet eval`: one row per run of a dataset and
-- one per case, so a later run can be compared with an earlier one
-- (--compare). Unrelated to eval_summaries, which counts the pipeline's
-- eval-gate verdicts.

CREATE TABLE eval_runs (
    id           uuid PRIMARY KEY,
    created_at   timestamptz NOT NULL DEFAULT now(),
    dataset      text NOT NULL,                    -- the dataset directory as given
    label        text NOT NULL DEFAULT '',         -- e.g. "verify=off" in an ablation
    judge_model  text NOT NULL DEFAULT '',         -- empty: the line window alone matched
    match_window integer NOT NULL,                 -- lines of slack when matching findings to golden issues
    harness      jsonb NOT NULL DEFAULT '{}',      -- the harness toggles the run used, and "parallel" (cases at once)
    cases        integer NOT NULL,
    golden       integer NOT NULL,                 -- golden issues in the dataset (tp + fn)
    tp           integer NOT NULL,
    fp           integer NOT NULL,
    fn           integer NOT NULL,
    precision    double precision NOT NULL,
    recall       double precision NOT NULL,
    f1           double precision NOT NULL,
    runtime_ms   bigint NOT NULL,                  -- sum of the cases' review times
    llm_calls    integer NOT NULL,                 -- the reviews' calls (judge calls not included)
    tokens_in    bigint NOT NULL,
    tokens_out   bigint NOT NULL,
    cost         double precision NOT NULL,        -- estimated USD of the reviews' calls
    judge_calls  integer NOT NULL DEFAULT 0,
    judge_cost   double precision NOT NULL DEFAULT 0
);
CREATE INDEX eval_runs_created_idx ON eval_runs (created_at);

CREATE TABLE eval_results (
    run_id      uuid NOT NULL REFERENCES eval_runs(id) ON DELETE CASCADE,
    case_name   text NOT NULL,
    review_id   uuid REFERENCES reviews(id) ON DELETE SET NULL,
    golden      integer NOT NULL,
    tp          integer NOT NULL,
    fp          integer NOT NULL,
    fn          integer NOT NULL,
    runtime_ms  bigint NOT NULL,
    llm_calls   integer NOT NULL,
    tokens_in   bigint NOT NULL,
    tokens_out  bigint NOT NULL,
    cost        double precision NOT NULL,
    error       text NOT NULL DEFAULT '',          -- why the case could not be reviewed
    detail      jsonb NOT NULL DEFAULT '{}',       -- matches, misses and counts per risk type
    PRIMARY KEY (run_id, case_name)
);
CREATE INDEX eval_results_review_idx ON eval_results (review_id);

-- +goose Down
DROP TABLE IF EXISTS eval_results;
DROP TABLE IF EXISTS eval_runs;
