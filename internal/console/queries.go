package console

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The console's queries. They read only what reviewfleet_console may read
// (migrations/00019_console.sql) and page by keys, never by OFFSET.

// reviewRow is a review as the lists show it.
type reviewRow struct {
	ID, Repo, Status, Stage, Kind string
	BatchID                       string
	BaseRef, HeadRef              string
	BaseSHA, HeadSHA              string
	Error                         string
	Incomplete                    bool
	FailedItems                   int
	LLMCalls                      int
	TokensIn, TokensOut           int64
	Cost                          float64
	CreatedAt                     time.Time
	StartedAt, FinishedAt         *time.Time
	Reported                      int
}

const reviewRowColumns = `r.id::text, r.repo, r.status, r.stage, r.kind, coalesce(r.batch_id::text, ''),
	r.base_ref, r.head_ref, r.base_sha, r.head_sha, r.error, r.incomplete, r.failed_items, r.llm_calls,
	r.tokens_in, r.tokens_out, r.cost, r.created_at, r.started_at, r.finished_at,
	coalesce((SELECT json_array_length(p.json->'findings') FROM reports p WHERE p.review_id = r.id), 0)`

func scanReviewRow(row pgx.Row) (reviewRow, error) {
	var v reviewRow
	err := row.Scan(&v.ID, &v.Repo, &v.Status, &v.Stage, &v.Kind, &v.BatchID, &v.BaseRef, &v.HeadRef, &v.BaseSHA,
		&v.HeadSHA, &v.Error, &v.Incomplete, &v.FailedItems, &v.LLMCalls, &v.TokensIn, &v.TokensOut, &v.Cost,
		&v.CreatedAt, &v.StartedAt, &v.FinishedAt, &v.Reported)
	return v, err
}

func collectReviews(rows pgx.Rows, err error) ([]reviewRow, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []reviewRow
	for rows.Next() {
		v, err := scanReviewRow(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// cursor is a keyset position in a newest-first list: the last row's
// creation time and id.
type cursor struct {
	At time.Time
	ID string
}

func (c cursor) String() string {
	if c.ID == "" {
		return ""
	}
	return c.At.UTC().Format(time.RFC3339Nano) + "_" + c.ID
}

func parseCursor(s string) (cursor, bool) {
	at, id, ok := strings.Cut(s, "_")
	if !ok {
		return cursor{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil || len(id) != 36 {
		return cursor{}, false
	}
	return cursor{At: t, ID: id}, true
}

// listReviews pages through all reviews, newest first.
func (c *Console) listReviews(ctx context.Context, before cursor, limit int) ([]reviewRow, error) {
	var rows pgx.Rows
	var err error
	if before.ID == "" {
		rows, err = c.opts.DB.Query(ctx, `SELECT `+reviewRowColumns+` FROM reviews r
			ORDER BY r.created_at DESC, r.id DESC LIMIT $1`, limit)
	} else {
		rows, err = c.opts.DB.Query(ctx, `SELECT `+reviewRowColumns+` FROM reviews r
			WHERE (r.created_at, r.id) < ($1, $2::uuid)
			ORDER BY r.created_at DESC, r.id DESC LIMIT $3`, before.At, before.ID, limit)
	}
	out, err := collectReviews(rows, err)
	if err != nil {
		return nil, fmt.Errorf("list reviews: %w", err)
	}
	return out, nil
}

// progress counts a batch's reviews by status with their cost.
type progress struct {
	Entries, Reviews              int
	Queued, Running, Done, Failed int
	SubmitErrors                  int
	LLMCalls                      int
	Cost                          float64
	FirstStarted, LastFinished    *time.Time
	ETA                           *time.Time
}

// Ended is how many reviews ended.
func (p progress) Ended() int { return p.Done + p.Failed }

// Percent is the share of ended reviews, 0–100.
func (p progress) Percent() int {
	if p.Reviews == 0 {
		return 0
	}
	return 100 * p.Ended() / p.Reviews
}

// estimate sets ETA from the pace so far: reviews ended per second since
// the first started.
func (p *progress) estimate(now time.Time) {
	left := p.Queued + p.Running
	if left == 0 || p.FirstStarted == nil || p.Ended() == 0 {
		return
	}
	spent := now.Sub(*p.FirstStarted)
	if spent <= 0 {
		return
	}
	eta := now.Add(time.Duration(float64(spent) / float64(p.Ended()) * float64(left)))
	p.ETA = &eta
}

// batchRow is a batch with its progress.
type batchRow struct {
	ID, Name, Source, Status string
	Labels                   map[string]string
	MaxRunning               int
	CreatedAt                time.Time
	SubmittedAt, CancelledAt *time.Time
	P                        progress
}

const batchColumns = `SELECT b.id::text, b.name, b.source, b.status, b.labels::text, b.max_running, b.created_at,
	b.submitted_at, b.cancelled_at, b.entries, b.submit_errors FROM batches b`

// progressSQL counts the reviews linked to the batches $1 in one pass (an
// entry linked to an earlier identical review counts with it, and costs
// its batch nothing): one join over all the page's batches, not one per
// batch.
const progressSQL = `
	SELECT e.batch_id::text, count(*), count(*) FILTER (WHERE r.status = 'queued'), count(*) FILTER (WHERE r.status = 'running'),
	       count(*) FILTER (WHERE r.status = 'done'), count(*) FILTER (WHERE r.status = 'failed'),
	       coalesce(sum(r.llm_calls) FILTER (WHERE NOT e.duplicate), 0),
	       coalesce(sum(r.cost) FILTER (WHERE NOT e.duplicate), 0),
	       min(r.started_at), max(r.finished_at)
	FROM (SELECT DISTINCT ON (batch_id, review_id) batch_id, review_id, duplicate FROM batch_reviews
	      WHERE batch_id = ANY($1::uuid[]) AND review_id IS NOT NULL ORDER BY batch_id, review_id, duplicate) e
	JOIN reviews r ON r.id = e.review_id
	GROUP BY e.batch_id`

func (c *Console) scanBatches(ctx context.Context, rows pgx.Rows, err error) ([]batchRow, error) {
	if err != nil {
		return nil, err
	}
	var out []batchRow
	for rows.Next() {
		var b batchRow
		var labels string
		if err := rows.Scan(&b.ID, &b.Name, &b.Source, &b.Status, &labels, &b.MaxRunning, &b.CreatedAt, &b.SubmittedAt,
			&b.CancelledAt, &b.P.Entries, &b.P.SubmitErrors); err != nil {
			rows.Close()
			return nil, err
		}
		_ = json.Unmarshal([]byte(labels), &b.Labels)
		out = append(out, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, err
	}
	ids := make([]string, len(out))
	byID := map[string]*batchRow{}
	for i := range out {
		ids[i] = out[i].ID
		byID[out[i].ID] = &out[i]
	}
	prows, err := c.opts.DB.Query(ctx, progressSQL, ids)
	if err != nil {
		return nil, err
	}
	defer prows.Close()
	for prows.Next() {
		var id string
		var p progress
		if err := prows.Scan(&id, &p.Reviews, &p.Queued, &p.Running, &p.Done, &p.Failed, &p.LLMCalls, &p.Cost,
			&p.FirstStarted, &p.LastFinished); err != nil {
			return nil, err
		}
		if b := byID[id]; b != nil {
			p.Entries, p.SubmitErrors = b.P.Entries, b.P.SubmitErrors
			b.P = p
		}
	}
	if err := prows.Err(); err != nil {
		return nil, err
	}
	now := c.opts.Now()
	for i := range out {
		out[i].P.estimate(now)
	}
	return out, nil
}

// listBatches pages through the batches, newest first.
func (c *Console) listBatches(ctx context.Context, before cursor, limit int) ([]batchRow, error) {
	var rows pgx.Rows
	var err error
	if before.ID == "" {
		rows, err = c.opts.DB.Query(ctx, batchColumns+` ORDER BY b.created_at DESC, b.id DESC LIMIT $1`, limit)
	} else {
		rows, err = c.opts.DB.Query(ctx, batchColumns+` WHERE (b.created_at, b.id) < ($1, $2::uuid)
			ORDER BY b.created_at DESC, b.id DESC LIMIT $3`, before.At, before.ID, limit)
	}
	out, err := c.scanBatches(ctx, rows, err)
	if err != nil {
		return nil, fmt.Errorf("list batches: %w", err)
	}
	return out, nil
}

func (c *Console) getBatch(ctx context.Context, id string) (batchRow, error) {
	rows, err := c.opts.DB.Query(ctx, batchColumns+` WHERE b.id = $1::uuid`, id)
	out, err := c.scanBatches(ctx, rows, err)
	if err != nil {
		return batchRow{}, fmt.Errorf("load batch %s: %w", id, err)
	}
	if len(out) == 0 {
		return batchRow{}, errNotFound
	}
	return out[0], nil
}

// repoSummary is one repository's line in a batch.
type repoSummary struct {
	Repo                          string
	Reviews, Done, Failed, Active int
	BySeverity                    map[string]int
	Cost                          float64
}

func (c *Console) batchRepos(ctx context.Context, id string) ([]repoSummary, error) {
	rows, err := c.opts.DB.Query(ctx, `
		WITH e AS MATERIALIZED (
		    SELECT DISTINCT ON (review_id) review_id, repo, duplicate FROM batch_reviews
		    WHERE batch_id = $1::uuid AND review_id IS NOT NULL ORDER BY review_id, duplicate),
		sev AS (
		    SELECT e.repo, f.severity, count(*) AS n
		    FROM e JOIN findings f ON f.review_id = e.review_id AND f.status = 'active'
		    GROUP BY e.repo, f.severity),
		sevs AS (SELECT repo, json_object_agg(severity, n)::text AS by_severity FROM sev GROUP BY repo)
		SELECT e.repo, count(*), count(*) FILTER (WHERE r.status = 'done'), count(*) FILTER (WHERE r.status = 'failed'),
		       count(*) FILTER (WHERE r.status IN ('queued', 'running')),
		       coalesce(sum(r.cost) FILTER (WHERE NOT e.duplicate), 0),
		       coalesce(min(s.by_severity), '{}')
		FROM e JOIN reviews r ON r.id = e.review_id LEFT JOIN sevs s ON s.repo = e.repo
		GROUP BY e.repo ORDER BY e.repo LIMIT 1000`, id)
	if err != nil {
		return nil, fmt.Errorf("summarise batch %s by repository: %w", id, err)
	}
	defer rows.Close()
	var out []repoSummary
	for rows.Next() {
		var s repoSummary
		var sev string
		if err := rows.Scan(&s.Repo, &s.Reviews, &s.Done, &s.Failed, &s.Active, &s.Cost, &sev); err != nil {
			return nil, fmt.Errorf("summarise batch %s by repository: %w", id, err)
		}
		_ = json.Unmarshal([]byte(sev), &s.BySeverity)
		out = append(out, s)
	}
	return out, rows.Err()
}

// entryFilter narrows a batch's reviews.
type entryFilter struct {
	Status, Repo, Label, Severity string
	After                         int // keyset: entries after this manifest line
}

// batchEntry is one entry of a batch with its review.
type batchEntry struct {
	Line                   int
	Repo, BaseRef, HeadRef string
	Labels                 map[string]string
	Duplicate              bool
	Error                  string
	Review                 *reviewRow
}

func (c *Console) batchEntries(ctx context.Context, id string, f entryFilter, limit int) ([]batchEntry, error) {
	where := []string{"e.batch_id = $1::uuid", "e.line > $2"}
	args := []any{id, f.After}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", fmt.Sprintf("$%d", len(args))))
	}
	if f.Status != "" {
		if f.Status == "unsubmitted" {
			where = append(where, "e.review_id IS NULL")
		} else {
			add("r.status = ?", f.Status)
		}
	}
	if f.Repo != "" {
		add("e.repo = ?", f.Repo)
	}
	if k, v, ok := strings.Cut(f.Label, "="); ok {
		b, _ := json.Marshal(map[string]string{strings.TrimSpace(k): strings.TrimSpace(v)})
		add("e.labels @> ?::jsonb", string(b))
	} else if f.Label != "" {
		add("jsonb_exists(e.labels, ?)", f.Label) // a label of that name, any value
	}
	if f.Severity != "" {
		add("EXISTS (SELECT 1 FROM findings x WHERE x.review_id = r.id AND x.status = 'active' AND x.severity = ?)", f.Severity)
	}
	args = append(args, limit)
	q := `SELECT e.line, e.repo, e.base_ref, e.head_ref, e.labels::text, e.duplicate, e.error, e.review_id IS NOT NULL,
		` + reviewNullColumns + `
		FROM batch_reviews e LEFT JOIN reviews r ON r.id = e.review_id
		WHERE ` + strings.Join(where, " AND ") + fmt.Sprintf(` ORDER BY e.line LIMIT $%d`, len(args))
	rows, err := c.opts.DB.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list the reviews of batch %s: %w", id, err)
	}
	defer rows.Close()
	var out []batchEntry
	for rows.Next() {
		var e batchEntry
		var labels string
		var has bool
		var n nullReview
		dest := append([]any{&e.Line, &e.Repo, &e.BaseRef, &e.HeadRef, &labels, &e.Duplicate, &e.Error, &has}, n.dest()...)
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("list the reviews of batch %s: %w", id, err)
		}
		_ = json.Unmarshal([]byte(labels), &e.Labels)
		if has {
			r := n.row()
			e.Review = &r
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// reviewNullColumns are reviewRowColumns of a LEFT JOINed review.
const reviewNullColumns = `coalesce(r.id::text, ''), coalesce(r.status, ''), coalesce(r.stage, ''), coalesce(r.error, ''),
	coalesce(r.incomplete, false), coalesce(r.cost, 0), r.created_at, r.finished_at,
	coalesce((SELECT json_array_length(p.json->'findings') FROM reports p WHERE p.review_id = r.id), 0)`

type nullReview struct {
	ID, Status, Stage, Error string
	Incomplete               bool
	Cost                     float64
	CreatedAt, FinishedAt    *time.Time
	Reported                 int
}

func (n *nullReview) dest() []any {
	return []any{&n.ID, &n.Status, &n.Stage, &n.Error, &n.Incomplete, &n.Cost, &n.CreatedAt, &n.FinishedAt, &n.Reported}
}

func (n *nullReview) row() reviewRow {
	r := reviewRow{ID: n.ID, Status: n.Status, Stage: n.Stage, Error: n.Error, Incomplete: n.Incomplete, Cost: n.Cost,
		FinishedAt: n.FinishedAt, Reported: n.Reported}
	if n.CreatedAt != nil {
		r.CreatedAt = *n.CreatedAt
	}
	return r
}
