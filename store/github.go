package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// PullRequest identifies a GitHub pull request at a head commit.
type PullRequest struct {
	Host   string // github.com, or a GitHub Enterprise host
	Owner  string
	Repo   string
	Number int
	// HeadSHA is the head commit reviewed.
	HeadSHA string
}

// String is HOST/OWNER/REPO#N.
func (p PullRequest) String() string {
	return fmt.Sprintf("%s/%s/%s#%d", p.Host, p.Owner, p.Repo, p.Number)
}

// ChangeKey names the pull request's change line, the same for every push
// ("pr:HOST/OWNER/REPO#N"): a review of a later push builds on the newest
// finished review of an earlier one (see PreviousReview).
func (p PullRequest) ChangeKey() string { return "pr:" + p.String() }

// SetReviewPullRequest records which pull request a review reviews.
func (s *Store) SetReviewPullRequest(ctx context.Context, reviewID string, pr PullRequest) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO review_pull_requests (review_id, host, owner, repo, number, head_sha)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (review_id) DO UPDATE SET host = EXCLUDED.host, owner = EXCLUDED.owner,
			repo = EXCLUDED.repo, number = EXCLUDED.number, head_sha = EXCLUDED.head_sha`,
		reviewID, pr.Host, pr.Owner, pr.Repo, pr.Number, pr.HeadSHA)
	if err != nil {
		return fmt.Errorf("record the pull request of review %s: %w", reviewID, translate(err))
	}
	return nil
}

// ReviewPullRequest returns the pull request a review reviews, or
// ErrNotFound when it was not submitted for one.
func (s *Store) ReviewPullRequest(ctx context.Context, reviewID string) (PullRequest, error) {
	var pr PullRequest
	err := s.pool.QueryRow(ctx, `SELECT host, owner, repo, number, head_sha FROM review_pull_requests WHERE review_id = $1`, reviewID).
		Scan(&pr.Host, &pr.Owner, &pr.Repo, &pr.Number, &pr.HeadSHA)
	if err != nil {
		return PullRequest{}, fmt.Errorf("get the pull request of review %s: %w", reviewID, translate(err))
	}
	return pr, nil
}

// GitHubPost is the GitHub review posted for a pull request at a head commit.
type GitHubPost struct {
	PR             PullRequest
	ReviewID       string
	GitHubReviewID int64
	Comments       int
	PostedAt       time.Time
	UpdatedAt      time.Time
}

// GetGitHubPost returns the review posted for pr at its head commit, or
// ErrNotFound.
func (s *Store) GetGitHubPost(ctx context.Context, pr PullRequest) (GitHubPost, error) {
	p := GitHubPost{PR: pr}
	err := s.pool.QueryRow(ctx, `
		SELECT review_id, github_review_id, comments, posted_at, updated_at FROM github_posts
		WHERE host = $1 AND owner = $2 AND repo = $3 AND number = $4 AND head_sha = $5`,
		pr.Host, pr.Owner, pr.Repo, pr.Number, pr.HeadSHA).
		Scan(&p.ReviewID, &p.GitHubReviewID, &p.Comments, &p.PostedAt, &p.UpdatedAt)
	if err != nil {
		return GitHubPost{}, fmt.Errorf("get the posted review of %s at %s: %w", pr, pr.HeadSHA, translate(err))
	}
	return p, nil
}

// SaveGitHubPost records (or updates) the review posted for a pull request
// at its head commit.
func (s *Store) SaveGitHubPost(ctx context.Context, p GitHubPost) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO github_posts (host, owner, repo, number, head_sha, review_id, github_review_id, comments)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (host, owner, repo, number, head_sha) DO UPDATE SET review_id = EXCLUDED.review_id,
			github_review_id = EXCLUDED.github_review_id, comments = EXCLUDED.comments, updated_at = now()`,
		p.PR.Host, p.PR.Owner, p.PR.Repo, p.PR.Number, p.PR.HeadSHA, p.ReviewID, p.GitHubReviewID, p.Comments)
	if err != nil {
		return fmt.Errorf("record the posted review of %s: %w", p.PR, translate(err))
	}
	return nil
}

// WithLock runs fn holding the session advisory lock called name, waiting
// for it as long as ctx allows. It serialises work across processes (one
// writer per GitHub installation); the lock is per schema, like TryLeader's.
// The lock lives on a connection of its own, outside the pool: holders
// waiting for it must not take the pool's connections from the holder
// that has it and needs them to finish.
func (s *Store) WithLock(ctx context.Context, name string, fn func() error) error {
	cfg := s.pool.Config().ConnConfig.Copy()
	// Waiting for the lock may take as long as the holder's posting (rate
	// limit waits included): the pool's statement_timeout must not cut it.
	delete(cfg.RuntimeParams, "statement_timeout")
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect for lock %s: %w", name, err)
	}
	defer conn.Close(context.WithoutCancel(ctx)) // closing releases the lock too
	const key = `hashtextextended(coalesce(current_schema(), '') || ':' || $1, 0)`
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(`+key+`)`, name); err != nil {
		return fmt.Errorf("take lock %s: %w", name, err)
	}
	return fn()
}

// Webhook delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliveryWorking   = "working"
	DeliverySubmitted = "submitted"
	DeliverySkipped   = "skipped"
	DeliveryFailed    = "failed"
	DeliveryPosted    = "posted"
)

// Delivery is one webhook delivery of a pull request event.
type Delivery struct {
	ID     string // X-GitHub-Delivery
	Event  string
	Action string
	PR     PullRequest
	// Post says whether the review is posted on the pull request when it ends.
	Post     bool
	Status   string
	ReviewID string
	Note     string
	// PayloadSHA256 is the SHA-256 of the request body (nil: not known).
	// Two deliveries may not share one: the second is a replay.
	PayloadSHA256 []byte
}

// AddDelivery stores a delivery as pending. It returns false when a
// delivery with the same ID (GitHub redelivers) or the same payload hash
// (a replayed body under a new ID) was stored before; the insert is one
// statement, so two of them racing store one.
func (s *Store) AddDelivery(ctx context.Context, d Delivery) (bool, error) {
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO webhook_deliveries (id, event, action, host, owner, repo, number, head_sha, post, payload_sha256)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
		d.ID, d.Event, d.Action, d.PR.Host, d.PR.Owner, d.PR.Repo, d.PR.Number, d.PR.HeadSHA, d.Post, d.PayloadSHA256)
	if err != nil {
		return false, fmt.Errorf("store webhook delivery %s: %w", d.ID, translate(err))
	}
	return tag.RowsAffected() == 1, nil
}

const deliveryColumns = `id, event, action, host, owner, repo, number, head_sha, post, status, coalesce(review_id::text, ''), note`

func scanDelivery(row pgx.Row) (Delivery, error) {
	var d Delivery
	err := row.Scan(&d.ID, &d.Event, &d.Action, &d.PR.Host, &d.PR.Owner, &d.PR.Repo, &d.PR.Number, &d.PR.HeadSHA,
		&d.Post, &d.Status, &d.ReviewID, &d.Note)
	return d, translate(err)
}

// ClaimDelivery takes the oldest pending delivery (or one left working
// longer than stale by a processor that died) and marks it working. It
// returns ErrNotFound when there is none.
func (s *Store) ClaimDelivery(ctx context.Context, stale time.Duration) (Delivery, error) {
	d, err := scanDelivery(s.pool.QueryRow(ctx, `
		UPDATE webhook_deliveries SET status = 'working', updated_at = now()
		WHERE id = (SELECT id FROM webhook_deliveries
			WHERE (status = 'pending' AND not_before <= now()) OR (status = 'working' AND updated_at < now() - $1::interval)
			ORDER BY received_at LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING `+deliveryColumns, stale.String()))
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return Delivery{}, err
		}
		return Delivery{}, fmt.Errorf("claim a webhook delivery: %w", err)
	}
	return d, nil
}

// FinishDelivery sets a delivery's status, review and note.
func (s *Store) FinishDelivery(ctx context.Context, id, status, reviewID, note string) error {
	var rid any
	if reviewID != "" {
		rid = reviewID
	}
	_, err := s.pool.Exec(ctx, `UPDATE webhook_deliveries SET status = $2, review_id = coalesce($3::uuid, review_id), note = $4,
		attempts = 0, not_before = now(), updated_at = now() WHERE id = $1`,
		id, status, rid, note)
	if err != nil {
		return fmt.Errorf("update webhook delivery %s: %w", id, translate(err))
	}
	return nil
}

// TouchDelivery tells other processors a working delivery's processor is
// alive (see ClaimDelivery's stale).
func (s *Store) TouchDelivery(ctx context.Context, id string) error {
	_, err := s.pool.Exec(ctx, `UPDATE webhook_deliveries SET updated_at = now() WHERE id = $1 AND status = 'working'`, id)
	if err != nil {
		return fmt.Errorf("touch webhook delivery %s: %w", id, translate(err))
	}
	return nil
}

// RetryDelivery records a failed try of a delivery's current step: the
// delivery goes back to status (pending to submit again, submitted to post
// again) after backoff doubled per earlier failure, or, once it has failed
// maxAttempts times, to failed. It returns the status set.
func (s *Store) RetryDelivery(ctx context.Context, id, status, note string, maxAttempts int, backoff time.Duration) (string, error) {
	var set string
	err := s.pool.QueryRow(ctx, `
		UPDATE webhook_deliveries SET attempts = attempts + 1,
			status = CASE WHEN attempts + 1 >= $3 THEN 'failed' ELSE $2 END,
			not_before = now() + make_interval(secs => $4 * power(2, least(attempts, 16))),
			note = $5, updated_at = now()
		WHERE id = $1 RETURNING status`, id, status, maxAttempts, backoff.Seconds(), note).Scan(&set)
	if err != nil {
		return "", fmt.Errorf("schedule webhook delivery %s again: %w", id, translate(err))
	}
	return set, nil
}

// GetDelivery returns a delivery, or ErrNotFound.
func (s *Store) GetDelivery(ctx context.Context, id string) (Delivery, error) {
	d, err := scanDelivery(s.pool.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE id = $1`, id))
	if err != nil {
		return Delivery{}, fmt.Errorf("get webhook delivery %s: %w", id, err)
	}
	return d, nil
}

// DeliveriesToPost lists submitted deliveries that asked for posting and
// whose review has ended (done or failed), oldest first, at most limit.
func (s *Store) DeliveriesToPost(ctx context.Context, limit int) ([]Delivery, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT `+deliveryColumnsD+` FROM webhook_deliveries d JOIN reviews r ON r.id = d.review_id
		WHERE d.status = 'submitted' AND d.post AND d.not_before <= now() AND r.status IN ('done', 'failed')
		ORDER BY d.received_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("list webhook deliveries to post: %w", translate(err))
	}
	defer rows.Close()
	var out []Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, fmt.Errorf("list webhook deliveries to post: %w", err)
		}
		out = append(out, d)
	}
	return out, translate(rows.Err())
}

// deliveryColumnsD is deliveryColumns qualified by the alias d.
const deliveryColumnsD = `d.id, d.event, d.action, d.host, d.owner, d.repo, d.number, d.head_sha, d.post, d.status, coalesce(d.review_id::text, ''), d.note`
