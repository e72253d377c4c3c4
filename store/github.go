package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
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
	err := s.q.SetReviewPullRequest(ctx, sqlcdb.SetReviewPullRequestParams{ReviewID: reviewID, Host: pr.Host,
		Owner: pr.Owner, Repo: pr.Repo, Number: i32(pr.Number), HeadSHA: pr.HeadSHA})
	if err != nil {
		return fmt.Errorf("record the pull request of review %s: %w", reviewID, translate(err))
	}
	return nil
}

// ReviewPullRequest returns the pull request a review reviews, or
// ErrNotFound when it was not submitted for one.
func (s *Store) ReviewPullRequest(ctx context.Context, reviewID string) (PullRequest, error) {
	r, err := s.q.ReviewPullRequest(ctx, reviewID)
	if err != nil {
		return PullRequest{}, fmt.Errorf("get the pull request of review %s: %w", reviewID, translate(err))
	}
	return PullRequest{Host: r.Host, Owner: r.Owner, Repo: r.Repo, Number: int(r.Number), HeadSHA: r.HeadSHA}, nil
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
	r, err := s.q.GetGitHubPost(ctx, sqlcdb.GetGitHubPostParams{Host: pr.Host, Owner: pr.Owner, Repo: pr.Repo,
		Number: i32(pr.Number), HeadSHA: pr.HeadSHA})
	if err != nil {
		return GitHubPost{}, fmt.Errorf("get the posted review of %s at %s: %w", pr, pr.HeadSHA, translate(err))
	}
	return GitHubPost{PR: pr, ReviewID: r.ReviewID, GitHubReviewID: r.GithubReviewID, Comments: int(r.Comments),
		PostedAt: r.PostedAt, UpdatedAt: r.UpdatedAt}, nil
}

// SaveGitHubPost records (or updates) the review posted for a pull request
// at its head commit.
func (s *Store) SaveGitHubPost(ctx context.Context, p GitHubPost) error {
	err := s.q.SaveGitHubPost(ctx, sqlcdb.SaveGitHubPostParams{Host: p.PR.Host, Owner: p.PR.Owner, Repo: p.PR.Repo,
		Number: i32(p.PR.Number), HeadSHA: p.PR.HeadSHA, ReviewID: p.ReviewID, GithubReviewID: p.GitHubReviewID,
		Comments: i32(p.Comments)})
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
	if err := sqlcdb.New(conn).TakeNamedLock(ctx, name); err != nil {
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
	n, err := s.q.AddDelivery(ctx, sqlcdb.AddDeliveryParams{ID: d.ID, Event: d.Event, Action: d.Action,
		Host: d.PR.Host, Owner: d.PR.Owner, Repo: d.PR.Repo, Number: i32(d.PR.Number), HeadSHA: d.PR.HeadSHA,
		Post: d.Post, PayloadSha256: d.PayloadSHA256})
	if err != nil {
		return false, fmt.Errorf("store webhook delivery %s: %w", d.ID, translate(err))
	}
	return n == 1, nil
}

func deliveryFromRow(r sqlcdb.WebhookDelivery) Delivery {
	return Delivery{ID: r.ID, Event: r.Event, Action: r.Action,
		PR:   PullRequest{Host: r.Host, Owner: r.Owner, Repo: r.Repo, Number: int(r.Number), HeadSHA: r.HeadSHA},
		Post: r.Post, Status: r.Status, ReviewID: orEmpty(r.ReviewID), Note: r.Note}
}

// ClaimDelivery takes the oldest pending delivery (or one left working
// longer than stale by a processor that died) and marks it working. It
// returns ErrNotFound when there is none.
func (s *Store) ClaimDelivery(ctx context.Context, stale time.Duration) (Delivery, error) {
	r, err := s.q.ClaimDelivery(ctx, stale)
	if err != nil {
		if err = translate(err); errors.Is(err, ErrNotFound) {
			return Delivery{}, err
		}
		return Delivery{}, fmt.Errorf("claim a webhook delivery: %w", err)
	}
	return deliveryFromRow(r), nil
}

// FinishDelivery sets a delivery's status, review and note.
func (s *Store) FinishDelivery(ctx context.Context, id, status, reviewID, note string) error {
	err := s.q.FinishDelivery(ctx, sqlcdb.FinishDeliveryParams{ID: id, Status: status, ReviewID: nonEmpty(reviewID), Note: note})
	if err != nil {
		return fmt.Errorf("update webhook delivery %s: %w", id, translate(err))
	}
	return nil
}

// TouchDelivery tells other processors a working delivery's processor is
// alive (see ClaimDelivery's stale).
func (s *Store) TouchDelivery(ctx context.Context, id string) error {
	if err := s.q.TouchDelivery(ctx, id); err != nil {
		return fmt.Errorf("touch webhook delivery %s: %w", id, translate(err))
	}
	return nil
}

// RetryDelivery records a failed try of a delivery's current step: the
// delivery goes back to status (pending to submit again, submitted to post
// again) after backoff doubled per earlier failure, or, once it has failed
// maxAttempts times, to failed. It returns the status set.
//
// Its statement stays hand-written: sqlc v1.31.1 misplaces its parameter
// edits in it (the CASE on attempts followed by the doubled interval) and
// refuses to generate it.
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
	r, err := s.q.GetDelivery(ctx, id)
	if err != nil {
		return Delivery{}, fmt.Errorf("get webhook delivery %s: %w", id, translate(err))
	}
	return deliveryFromRow(r), nil
}

// DeliveriesToPost lists submitted deliveries that asked for posting and
// whose review has ended (done or failed), oldest first, at most limit.
func (s *Store) DeliveriesToPost(ctx context.Context, limit int) ([]Delivery, error) {
	rows, err := s.q.DeliveriesToPost(ctx, i32(limit))
	if err != nil {
		return nil, fmt.Errorf("list webhook deliveries to post: %w", translate(err))
	}
	var out []Delivery
	for _, r := range rows {
		out = append(out, deliveryFromRow(r.WebhookDelivery))
	}
	return out, nil
}
