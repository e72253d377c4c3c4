-- +goose Up
-- GitHub pull requests: which pull request a review reviews, the GitHub
-- review posted for it, and the webhook deliveries received.

-- The pull request a review was submitted for (review --pr, bulk
-- --github-org, the webhook server).
CREATE TABLE review_pull_requests (
    review_id  uuid PRIMARY KEY REFERENCES reviews(id) ON DELETE CASCADE,
    host       text NOT NULL,          -- github.com, or the Enterprise host
    owner      text NOT NULL,
    repo       text NOT NULL,
    number     integer NOT NULL,
    head_sha   text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX review_pull_requests_pr ON review_pull_requests (host, owner, repo, number);

-- The GitHub review posted for a pull request at a head commit: posting
-- again for the same head updates it instead of adding a second one.
CREATE TABLE github_posts (
    host             text NOT NULL,
    owner            text NOT NULL,
    repo             text NOT NULL,
    number           integer NOT NULL,
    head_sha         text NOT NULL,
    review_id        uuid NOT NULL,         -- the reviewfleet review last posted
    github_review_id bigint NOT NULL,
    comments         integer NOT NULL DEFAULT 0,  -- inline comments it holds
    posted_at        timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (host, owner, repo, number, head_sha)
);

-- Webhook deliveries, deduplicated by X-GitHub-Delivery. The webhook
-- server stores an event as pending and answers at once; its processor
-- submits the review (pending -> working -> submitted | skipped | failed)
-- and, when posting is on, posts it once the review ends (-> posted).
CREATE TABLE webhook_deliveries (
    id          text PRIMARY KEY,           -- X-GitHub-Delivery
    event       text NOT NULL,
    action      text NOT NULL DEFAULT '',
    host        text NOT NULL DEFAULT '',
    owner       text NOT NULL DEFAULT '',
    repo        text NOT NULL DEFAULT '',
    number      integer NOT NULL DEFAULT 0,
    head_sha    text NOT NULL DEFAULT '',
    post        boolean NOT NULL DEFAULT false,
    status      text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'working', 'submitted', 'skipped', 'failed', 'posted')),
    review_id   uuid,
    note        text NOT NULL DEFAULT '',   -- why it was skipped or failed
    attempts    integer NOT NULL DEFAULT 0, -- failed tries of its current step (submit, then post)
    not_before  timestamptz NOT NULL DEFAULT now(), -- a failed try waits until then
    received_at timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_open ON webhook_deliveries (status, updated_at)
    WHERE status IN ('pending', 'working', 'submitted');

-- +goose Down
DROP TABLE IF EXISTS webhook_deliveries;
DROP TABLE IF EXISTS github_posts;
DROP TABLE IF EXISTS review_pull_requests;
