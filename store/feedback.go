package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// DeliveryRecorded is the status of a feedback delivery once its pull
// request's feedback was read.
const DeliveryRecorded = "recorded"

// FindingPost is a finding put on a pull request, and the GitHub comment
// that carries it (CommentID 0: listed in the review's summary).
type FindingPost struct {
	ID          int64
	PR          PullRequest // HeadSHA: the head it was posted on
	ReviewID    string
	FindingID   int64
	Fingerprint string
	KindKey     string
	CodeHash    string
	RiskType    string
	Severity    string
	File        string
	LineStart   int
	LineEnd     int
	Claim       string
	Model       string
	// PromptVersion names the prompts the finding was raised with.
	PromptVersion  string
	GitHubReviewID int64
	CommentID      int64
	PostedAt       time.Time
}

// RecordFindingPosts records findings posted on a pull request. A
// fingerprint posted on the pull request before keeps its first record;
// its comment is filled in when the first post had none.
func (s *Store) RecordFindingPosts(ctx context.Context, posts []FindingPost) error {
	if len(posts) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, p := range posts {
		var comment any
		if p.CommentID != 0 {
			comment = p.CommentID
		}
		var rid any
		if p.ReviewID != "" {
			rid = p.ReviewID
		}
		b.Queue(`
			INSERT INTO finding_posts (host, owner, repo, number, head_sha, review_id, finding_id, fingerprint, kind_key,
			                           code_hash, risk_type, severity, file, line_start, line_end, claim, model,
			                           prompt_version, github_review_id, github_comment_id)
			VALUES ($1, $2, $3, $4, $5, $6::uuid,
			        (SELECT id FROM findings WHERE id = $7 AND review_id = $6::uuid),
			        $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
			ON CONFLICT (host, owner, repo, number, fingerprint) DO UPDATE
			SET github_comment_id = coalesce(finding_posts.github_comment_id, EXCLUDED.github_comment_id),
			    github_review_id = CASE WHEN finding_posts.github_comment_id IS NULL AND EXCLUDED.github_comment_id IS NOT NULL
			                            THEN EXCLUDED.github_review_id ELSE finding_posts.github_review_id END`,
			p.PR.Host, p.PR.Owner, p.PR.Repo, p.PR.Number, p.PR.HeadSHA, rid, p.FindingID, p.Fingerprint, p.KindKey,
			p.CodeHash, p.RiskType, p.Severity, p.File, p.LineStart, p.LineEnd, p.Claim, p.Model, p.PromptVersion,
			p.GitHubReviewID, comment)
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("record the findings posted on %s: %w", posts[0].PR, translate(err))
	}
	return nil
}

const findingPostColumns = `id, host, owner, repo, number, head_sha, coalesce(review_id::text, ''), coalesce(finding_id, 0),
	fingerprint, kind_key, code_hash, risk_type, severity, file, line_start, line_end, claim, model, prompt_version,
	github_review_id, coalesce(github_comment_id, 0), posted_at`

func scanFindingPost(row pgx.Row) (FindingPost, error) {
	var p FindingPost
	err := row.Scan(&p.ID, &p.PR.Host, &p.PR.Owner, &p.PR.Repo, &p.PR.Number, &p.PR.HeadSHA, &p.ReviewID, &p.FindingID,
		&p.Fingerprint, &p.KindKey, &p.CodeHash, &p.RiskType, &p.Severity, &p.File, &p.LineStart, &p.LineEnd, &p.Claim,
		&p.Model, &p.PromptVersion, &p.GitHubReviewID, &p.CommentID, &p.PostedAt)
	return p, translate(err)
}

func collectPosts(rows pgx.Rows, what string) ([]FindingPost, error) {
	defer rows.Close()
	var out []FindingPost
	for rows.Next() {
		p, err := scanFindingPost(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, translate(err))
	}
	return out, nil
}

// PostsOf lists the findings posted on a pull request (any head), oldest
// first.
func (s *Store) PostsOf(ctx context.Context, pr PullRequest) ([]FindingPost, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+findingPostColumns+` FROM finding_posts
		WHERE host = $1 AND owner = $2 AND repo = $3 AND number = $4 ORDER BY id`, pr.Host, pr.Owner, pr.Repo, pr.Number)
	if err != nil {
		return nil, fmt.Errorf("list the findings posted on %s: %w", pr, translate(err))
	}
	return collectPosts(rows, "list the findings posted on "+pr.String())
}

// Repository names a repository on a GitHub host.
type Repository struct {
	Host, Owner, Repo string
}

// String is HOST/OWNER/REPO.
func (r Repository) String() string { return r.Host + "/" + r.Owner + "/" + r.Repo }

// PullRequestRef is a pull request without a head.
type PullRequestRef struct {
	Repository
	Number int
}

// PostedRepositories lists the repositories findings were posted on,
// matching filter ("OWNER/REPO", "HOST/OWNER/REPO" or "" for all).
func (s *Store) PostedRepositories(ctx context.Context, filter string) ([]Repository, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT host, owner, repo FROM finding_posts ORDER BY host, owner, repo`)
	if err != nil {
		return nil, fmt.Errorf("list the repositories posted on: %w", translate(err))
	}
	defer rows.Close()
	var out []Repository
	for rows.Next() {
		var r Repository
		if err := rows.Scan(&r.Host, &r.Owner, &r.Repo); err != nil {
			return nil, fmt.Errorf("list the repositories posted on: %w", err)
		}
		if MatchRepository(r, filter) {
			out = append(out, r)
		}
	}
	return out, translate(rows.Err())
}

// MatchRepository reports whether r is the repository filter names
// ("OWNER/REPO" or "HOST/OWNER/REPO", any case; "" matches every one).
func MatchRepository(r Repository, filter string) bool {
	f := strings.ToLower(strings.Trim(strings.TrimSpace(filter), "/"))
	switch {
	case f == "":
		return true
	case strings.Count(f, "/") == 1:
		return f == strings.ToLower(r.Owner+"/"+r.Repo)
	}
	return f == strings.ToLower(r.String())
}

// SyncItem is a pull request the feedback sync reads, with the highest
// finding post it covers (where the cursor moves once it is read).
type SyncItem struct {
	PR       PullRequestRef
	LastPost int64
}

// SyncBatch returns the next pull requests of a repository whose posted
// findings the feedback sync reads, resuming after the repository's
// cursor, at most limit, in post order. Pull requests closed more than
// two weeks ago are read no more. An empty or short answer means the pass
// reached the end (see AdvanceSyncCursor).
func (s *Store) SyncBatch(ctx context.Context, r Repository, limit int) ([]SyncItem, error) {
	var after int64
	err := s.pool.QueryRow(ctx, `SELECT after_id FROM feedback_cursors WHERE host = $1 AND owner = $2 AND repo = $3`,
		r.Host, r.Owner, r.Repo).Scan(&after)
	if err != nil && translate(err) != ErrNotFound {
		return nil, fmt.Errorf("read the feedback cursor of %s: %w", r, err)
	}
	rows, err := s.pool.Query(ctx, `
		SELECT p.number, max(p.id) FROM finding_posts p
		LEFT JOIN pull_request_fates f ON f.host = p.host AND f.owner = p.owner AND f.repo = p.repo AND f.number = p.number
		WHERE p.host = $1 AND p.owner = $2 AND p.repo = $3 AND p.id > $4
		  AND (f.state IS NULL OR f.state = 'open' OR f.closed_at IS NULL OR f.closed_at > now() - interval '14 days')
		GROUP BY p.number ORDER BY max(p.id) LIMIT $5`, r.Host, r.Owner, r.Repo, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list the pull requests of %s to sync: %w", r, translate(err))
	}
	defer rows.Close()
	var out []SyncItem
	for rows.Next() {
		it := SyncItem{PR: PullRequestRef{Repository: r}}
		if err := rows.Scan(&it.PR.Number, &it.LastPost); err != nil {
			return nil, fmt.Errorf("list the pull requests of %s to sync: %w", r, err)
		}
		out = append(out, it)
	}
	return out, translate(rows.Err())
}

// AdvanceSyncCursor moves a repository's feedback cursor to after (the
// last post synced); after 0 ends a pass, and the next starts over.
func (s *Store) AdvanceSyncCursor(ctx context.Context, r Repository, after int64) error {
	pass := 0
	if after == 0 {
		pass = 1
	}
	_, err := s.pool.Exec(ctx, `
		INSERT INTO feedback_cursors (host, owner, repo, after_id, passes) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (host, owner, repo) DO UPDATE SET after_id = EXCLUDED.after_id,
			passes = feedback_cursors.passes + EXCLUDED.passes, updated_at = now()`,
		r.Host, r.Owner, r.Repo, after, pass)
	if err != nil {
		return fmt.Errorf("move the feedback cursor of %s: %w", r, translate(err))
	}
	return nil
}

// Feedback signals (finding_feedback.signal).
const (
	SignalDismiss       = "dismiss"
	SignalAcknowledge   = "acknowledge"
	SignalFixed         = "fixed"
	SignalQuestion      = "question"
	SignalNeutral       = "neutral"
	SignalCodeChanged   = "code_changed"
	SignalCodeUnchanged = "code_unchanged"
	// SignalThreadResolved: a person resolved the comment's thread; with
	// no change to the finding's lines by the merge it is a dismissal.
	SignalThreadResolved = "thread_resolved"
)

// Feedback is one thing a person (or the merge) said about a posted
// finding.
type Feedback struct {
	PostID     int64
	Source     string // webhook | sync
	Kind       string // reaction | reply | thread | merge
	ExternalID string
	Author     string
	Content    string
	Signal     string
	Body       string // redacted by the caller
	// Trusted: the author may write to the repository; only trusted
	// dismissals teach (see Learnings).
	Trusted   bool
	CreatedAt time.Time
}

// AddFeedback records feedback; what was recorded before (same post, kind
// and GitHub id) is left alone, except an edited reply and a merge read
// again, which take the new reading. It returns how many rows are new or
// changed.
func (s *Store) AddFeedback(ctx context.Context, fb []Feedback) (int, error) {
	if len(fb) == 0 {
		return 0, nil
	}
	b := &pgx.Batch{}
	for _, f := range fb {
		at := f.CreatedAt
		if at.IsZero() {
			at = time.Now()
		}
		b.Queue(`
			INSERT INTO finding_feedback (post_id, source, kind, external_id, author, content, signal, body, created_at, trusted)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
			ON CONFLICT (post_id, kind, external_id) DO UPDATE SET signal = EXCLUDED.signal, content = EXCLUDED.content,
				body = EXCLUDED.body, trusted = EXCLUDED.trusted
			WHERE finding_feedback.kind IN ('merge', 'reply')
			  AND (finding_feedback.signal, finding_feedback.body) IS DISTINCT FROM (EXCLUDED.signal, EXCLUDED.body)`,
			f.PostID, f.Source, f.Kind, f.ExternalID, f.Author, f.Content, f.Signal, f.Body, at, f.Trusted)
	}
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	added := 0
	for range fb {
		tag, err := br.Exec()
		if err != nil {
			return added, fmt.Errorf("record feedback: %w", translate(err))
		}
		added += int(tag.RowsAffected())
	}
	return added, nil
}

// FeedbackOf lists the feedback on a posted finding, oldest first.
func (s *Store) FeedbackOf(ctx context.Context, postID int64) ([]Feedback, error) {
	rows, err := s.pool.Query(ctx, `SELECT post_id, source, kind, external_id, author, content, signal, body, created_at, trusted
		FROM finding_feedback WHERE post_id = $1 ORDER BY created_at, id`, postID)
	if err != nil {
		return nil, fmt.Errorf("list the feedback on post %d: %w", postID, translate(err))
	}
	defer rows.Close()
	var out []Feedback
	for rows.Next() {
		var f Feedback
		if err := rows.Scan(&f.PostID, &f.Source, &f.Kind, &f.ExternalID, &f.Author, &f.Content, &f.Signal, &f.Body, &f.CreatedAt, &f.Trusted); err != nil {
			return nil, fmt.Errorf("list the feedback on post %d: %w", postID, err)
		}
		out = append(out, f)
	}
	return out, translate(rows.Err())
}

// PullRequestFate is how a pull request ended (State "open" while it has
// not).
type PullRequestFate struct {
	PR       PullRequestRef
	State    string // open | merged | closed
	HeadSHA  string
	ClosedAt *time.Time
}

// SetPullRequestFate records a pull request's state.
func (s *Store) SetPullRequestFate(ctx context.Context, f PullRequestFate) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO pull_request_fates (host, owner, repo, number, state, head_sha, closed_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (host, owner, repo, number) DO UPDATE SET state = EXCLUDED.state, head_sha = EXCLUDED.head_sha,
			closed_at = EXCLUDED.closed_at, synced_at = now()`,
		f.PR.Host, f.PR.Owner, f.PR.Repo, f.PR.Number, f.State, f.HeadSHA, f.ClosedAt)
	if err != nil {
		return fmt.Errorf("record the state of %s#%d: %w", f.PR.Repository, f.PR.Number, translate(err))
	}
	return nil
}

// PullRequestsPosting lists the other pull requests of a repository on
// which any of the fingerprints was posted, most recently posted first,
// at most limit.
func (s *Store) PullRequestsPosting(ctx context.Context, r Repository, exclude int, fingerprints []string, limit int) ([]PullRequestRef, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT number FROM finding_posts
		WHERE host = $1 AND owner = $2 AND repo = $3 AND number <> $4 AND fingerprint = ANY($5)
		GROUP BY number ORDER BY max(id) DESC LIMIT $6`, r.Host, r.Owner, r.Repo, exclude, fingerprints, limit)
	if err != nil {
		return nil, fmt.Errorf("find the pull requests of %s with these findings: %w", r, translate(err))
	}
	defer rows.Close()
	var out []PullRequestRef
	for rows.Next() {
		ref := PullRequestRef{Repository: r}
		if err := rows.Scan(&ref.Number); err != nil {
			return nil, fmt.Errorf("find the pull requests of %s with these findings: %w", r, err)
		}
		out = append(out, ref)
	}
	return out, translate(rows.Err())
}

// CoverFeedbackDeliveries marks recorded the pending feedback deliveries
// of a pull request received until now, but the one being processed: the
// read of the pull request's feedback that follows sees everything they
// announced. A burst of comments thus costs one read. It returns how many
// it marked.
func (s *Store) CoverFeedbackDeliveries(ctx context.Context, pr PullRequest, by string) (int64, error) {
	tag, err := s.pool.Exec(ctx, `
		UPDATE webhook_deliveries SET status = 'recorded', note = 'read with delivery ' || $6, updated_at = now()
		WHERE status = 'pending' AND id <> $6 AND host = $1 AND owner = $2 AND repo = $3 AND number = $4
		  AND (event = ANY($5) OR (event = 'pull_request' AND action = 'closed'))
		  AND received_at <= now()`,
		pr.Host, pr.Owner, pr.Repo, pr.Number, []string{"pull_request_review_comment", "issue_comment"}, by)
	if err != nil {
		return 0, fmt.Errorf("cover the feedback deliveries of %s: %w", pr, translate(err))
	}
	return tag.RowsAffected(), nil
}
