-- +goose Up
-- Feedback from the people who read the posted reviews: which finding each
-- posted comment carries, the reactions and replies it drew, each pull
-- request's fate, and what the fleet learned from dismissals. Views
-- finding_outcomes and resolution_rate (see docs/sql.md) read them.

-- One row per finding put on a pull request (inline, or listed in the
-- summary when GitHub would not take it inline): the first post of its
-- fingerprint on that pull request. This is what links a GitHub comment to
-- the finding it carries.
CREATE TABLE finding_posts (
    id                bigserial PRIMARY KEY,
    host              text NOT NULL,
    owner             text NOT NULL,
    repo              text NOT NULL,
    number            integer NOT NULL,
    head_sha          text NOT NULL,             -- the head the finding was posted on
    review_id         uuid REFERENCES reviews(id) ON DELETE SET NULL,
    finding_id        bigint REFERENCES findings(id) ON DELETE SET NULL,
    fingerprint       text NOT NULL,
    kind_key          text NOT NULL DEFAULT '',  -- risk type, normalised claim, enclosing symbol
    code_hash         text NOT NULL DEFAULT '',  -- the finding's lines at head_sha
    risk_type         text NOT NULL DEFAULT '',
    severity          text NOT NULL DEFAULT '',
    file              text NOT NULL DEFAULT '',
    line_start        integer NOT NULL DEFAULT 0,
    line_end          integer NOT NULL DEFAULT 0,
    claim             text NOT NULL DEFAULT '',
    model             text NOT NULL DEFAULT '',  -- the model that raised it (intent stage)
    prompt_version    text NOT NULL DEFAULT '',
    github_review_id  bigint NOT NULL DEFAULT 0,
    github_comment_id bigint,                    -- NULL: listed in the summary
    posted_at         timestamptz NOT NULL DEFAULT now(),
    UNIQUE (host, owner, repo, number, fingerprint)
);
CREATE INDEX finding_posts_comment_idx ON finding_posts (github_comment_id) WHERE github_comment_id IS NOT NULL;
CREATE INDEX finding_posts_repo_idx ON finding_posts (host, owner, repo, fingerprint);
CREATE INDEX finding_posts_kind_idx ON finding_posts (host, owner, repo, kind_key);
CREATE INDEX finding_posts_review_idx ON finding_posts (review_id) WHERE review_id IS NOT NULL;
CREATE INDEX finding_posts_finding_idx ON finding_posts (finding_id) WHERE finding_id IS NOT NULL;
CREATE INDEX finding_posts_posted_idx ON finding_posts (posted_at);

-- What people did about a posted finding. signal is what it means:
-- dismiss (a thumbs-down, a false-positive or won't-fix reply), acknowledge
-- (a thumbs-up and the like), fixed (a reply saying so), question, neutral,
-- thread_resolved (the comment's thread was resolved), and at merge
-- code_changed / code_unchanged (whether the finding's lines changed
-- between the head it was posted on and the merged head).
CREATE TABLE finding_feedback (
    id          bigserial PRIMARY KEY,
    post_id     bigint NOT NULL REFERENCES finding_posts(id) ON DELETE CASCADE,
    source      text NOT NULL CHECK (source IN ('webhook', 'sync')),
    kind        text NOT NULL CHECK (kind IN ('reaction', 'reply', 'thread', 'merge')),
    external_id text NOT NULL,                    -- GitHub's id of the reaction or reply; the merged head
    author      text NOT NULL DEFAULT '',
    content     text NOT NULL DEFAULT '',         -- the reaction (+1, -1, …) or the reply's class
    signal      text NOT NULL CHECK (signal IN ('dismiss', 'acknowledge', 'fixed', 'question', 'neutral',
                                                'thread_resolved', 'code_changed', 'code_unchanged')),
    body        text NOT NULL DEFAULT '',         -- a reply, redacted and cut to 2000 characters
    -- The author may write to the repository (owner, member, collaborator):
    -- only their dismissals teach the fleet, so a stranger's thumbs-down on
    -- one pull request cannot silence a finding on the others.
    trusted     boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(), -- on GitHub
    recorded_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (post_id, kind, external_id)
);
CREATE INDEX finding_feedback_signal_idx ON finding_feedback (signal, post_id);

-- Each pull request's fate as last seen.
CREATE TABLE pull_request_fates (
    host      text NOT NULL,
    owner     text NOT NULL,
    repo      text NOT NULL,
    number    integer NOT NULL,
    state     text NOT NULL CHECK (state IN ('open', 'merged', 'closed')),
    head_sha  text NOT NULL DEFAULT '',     -- the head when it was merged or closed
    closed_at timestamptz,
    synced_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (host, owner, repo, number)
);

-- Where the feedback sync of a repository stands: it resumes from there.
CREATE TABLE feedback_cursors (
    host       text NOT NULL,
    owner      text NOT NULL,
    repo       text NOT NULL,
    after_id   bigint NOT NULL DEFAULT 0,   -- the last finding post synced in this pass
    passes     integer NOT NULL DEFAULT 0,  -- complete passes over the repository
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (host, owner, repo)
);

-- Learnings switched off by a person (reviewfleet learnings disable): a
-- dismissed finding of that fingerprint is posted again, and no longer
-- lowers the confidence of findings like it.
CREATE TABLE learning_switches (
    host        text NOT NULL,
    owner       text NOT NULL,
    repo        text NOT NULL,
    fingerprint text NOT NULL,
    disabled    boolean NOT NULL DEFAULT true,
    note        text NOT NULL DEFAULT '',
    changed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (host, owner, repo, fingerprint)
);

-- A feedback event (a review comment, an issue comment, a closed pull
-- request) is recorded rather than submitted.
ALTER TABLE webhook_deliveries DROP CONSTRAINT IF EXISTS webhook_deliveries_status_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_status_check
    CHECK (status IN ('pending', 'working', 'submitted', 'skipped', 'failed', 'posted', 'recorded'));

-- finding_outcomes: one row per posted finding, with the feedback it drew
-- and how it ended: dismissed (a person who may write to the repository
-- dismissed it, or resolved its thread and it merged unchanged; others'
-- dismissals are counted apart), resolved (its pull
-- request merged and its lines changed before, or a later push no longer
-- raised it), acknowledged (a person agreed or said it was fixed), open.
CREATE VIEW finding_outcomes AS
SELECT p.id                                   AS post_id,
       p.host,
       p.owner || '/' || p.repo               AS repo,
       p.number,
       p.head_sha,
       p.review_id,
       p.finding_id,
       p.fingerprint,
       p.risk_type,
       p.severity,
       p.file,
       p.line_start,
       p.line_end,
       p.model,
       p.prompt_version,
       p.posted_at,
       date_trunc('month', p.posted_at AT TIME ZONE 'UTC')::date AS month,
       (p.github_comment_id IS NOT NULL)      AS inline,
       coalesce(fa.state, 'open')             AS pr_state,
       fb.dismissals,
       fb.acknowledgements,
       fb.fixed_replies,
       fb.questions,
       fb.code_changed,
       rv.resolved_by_review,
       fb.untrusted_dismissals,
       fb.thread_resolved,
       CASE
           WHEN fb.dismissals > 0 THEN 'dismissed'
           WHEN fa.state = 'merged' AND (fb.code_changed OR rv.resolved_by_review) THEN 'resolved'
           -- Its thread resolved, and merged without its lines changing.
           WHEN fa.state = 'merged' AND fb.thread_resolved THEN 'dismissed'
           WHEN fb.acknowledgements > 0 OR fb.fixed_replies > 0 THEN 'acknowledged'
           ELSE 'open'
       END                                    AS outcome
FROM finding_posts p
LEFT JOIN pull_request_fates fa
       ON fa.host = p.host AND fa.owner = p.owner AND fa.repo = p.repo AND fa.number = p.number
CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE f.signal = 'dismiss' AND f.trusted) AS dismissals,
           count(*) FILTER (WHERE f.signal = 'acknowledge')        AS acknowledgements,
           count(*) FILTER (WHERE f.signal = 'fixed')              AS fixed_replies,
           count(*) FILTER (WHERE f.signal = 'question')           AS questions,
           coalesce(bool_or(f.signal = 'code_changed'), false)     AS code_changed,
           count(*) FILTER (WHERE f.signal = 'dismiss' AND NOT f.trusted) AS untrusted_dismissals,
           coalesce(bool_or(f.signal = 'thread_resolved' AND f.trusted), false) AS thread_resolved
    FROM finding_feedback f WHERE f.post_id = p.id) fb
CROSS JOIN LATERAL (
    -- A later review of the same pull request re-reviewed the finding's
    -- file and no longer raised it, and the newest finished review does
    -- not raise it either.
    SELECT EXISTS (SELECT 1 FROM findings f
                   JOIN review_pull_requests rp ON rp.review_id = f.review_id
                   WHERE rp.host = p.host AND rp.owner = p.owner AND rp.repo = p.repo AND rp.number = p.number
                     AND f.fingerprint = p.fingerprint AND f.resolved_in IS NOT NULL)
       AND NOT EXISTS (SELECT 1 FROM findings f
                       WHERE f.fingerprint = p.fingerprint AND f.status = 'active' AND f.resolved_in IS NULL
                         AND f.review_id = (SELECT r.id FROM reviews r
                                            JOIN review_pull_requests rp ON rp.review_id = r.id
                                            WHERE rp.host = p.host AND rp.owner = p.owner AND rp.repo = p.repo
                                              AND rp.number = p.number AND r.status = 'done'
                                            ORDER BY r.created_at DESC LIMIT 1)) AS resolved_by_review) rv;

-- resolution_rate: outcomes counted by repository, risk type, severity,
-- model, prompt version and month posted. resolution_rate is the share of
-- the findings on merged pull requests that were resolved before merge;
-- dismissal_rate the share of all posted findings people dismissed.
CREATE VIEW resolution_rate AS
SELECT o.repo,
       o.risk_type,
       o.severity,
       o.model,
       o.prompt_version,
       o.month,
       count(*)                                               AS posted,
       count(*) FILTER (WHERE o.outcome = 'resolved')         AS resolved,
       count(*) FILTER (WHERE o.outcome = 'dismissed')        AS dismissed,
       count(*) FILTER (WHERE o.outcome = 'acknowledged')     AS acknowledged,
       count(*) FILTER (WHERE o.outcome = 'open')             AS open,
       count(*) FILTER (WHERE o.pr_state = 'merged')          AS on_merged,
       round(count(*) FILTER (WHERE o.outcome = 'resolved')::numeric
             / nullif(count(*) FILTER (WHERE o.pr_state = 'merged'), 0), 3) AS resolution_rate,
       round(count(*) FILTER (WHERE o.outcome = 'dismissed')::numeric / count(*), 3) AS dismissal_rate
FROM finding_outcomes o
GROUP BY o.repo, o.risk_type, o.severity, o.model, o.prompt_version, o.month;

-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'reviewfleet_analyst') THEN
        GRANT SELECT ON finding_outcomes, resolution_rate TO reviewfleet_analyst;
    ELSE
        RAISE WARNING 'role reviewfleet_analyst is missing; grant finding_outcomes and resolution_rate as docs/sql.md shows';
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP VIEW IF EXISTS resolution_rate;
DROP VIEW IF EXISTS finding_outcomes;
UPDATE webhook_deliveries SET status = 'skipped' WHERE status = 'recorded';
ALTER TABLE webhook_deliveries DROP CONSTRAINT IF EXISTS webhook_deliveries_status_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_status_check
    CHECK (status IN ('pending', 'working', 'submitted', 'skipped', 'failed', 'posted'));
DROP TABLE IF EXISTS learning_switches;
DROP TABLE IF EXISTS feedback_cursors;
DROP TABLE IF EXISTS pull_request_fates;
DROP TABLE IF EXISTS finding_feedback;
DROP TABLE IF EXISTS finding_posts;
