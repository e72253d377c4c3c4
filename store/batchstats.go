package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// BatchProgress counts a batch's reviews by status, with their LLM usage.
// Entries linked to an earlier, identical review count with that review.
type BatchProgress struct {
	Reviews                       int
	Queued, Running, Done, Failed int
	LLMCalls                      int
	TokensIn, TokensOut           int64
	FirstStarted, LastFinished    *time.Time
}

// Remaining is how many reviews have not ended.
func (p BatchProgress) Remaining() int { return p.Queued + p.Running }

// GetBatchProgress counts the reviews linked to a batch by status.
func (s *Store) GetBatchProgress(ctx context.Context, batchID string) (BatchProgress, error) {
	var p BatchProgress
	err := s.pool.QueryRow(ctx, `
		SELECT count(*),
		       count(*) FILTER (WHERE r.status = 'queued'),
		       count(*) FILTER (WHERE r.status = 'running'),
		       count(*) FILTER (WHERE r.status = 'done'),
		       count(*) FILTER (WHERE r.status = 'failed'),
		       coalesce(sum(r.llm_calls) FILTER (WHERE NOT e.duplicate), 0),
		       coalesce(sum(r.tokens_in) FILTER (WHERE NOT e.duplicate), 0),
		       coalesce(sum(r.tokens_out) FILTER (WHERE NOT e.duplicate), 0),
		       min(r.started_at), max(r.finished_at)
		FROM (SELECT DISTINCT ON (review_id) review_id, duplicate FROM batch_reviews
		      WHERE batch_id = $1 AND review_id IS NOT NULL ORDER BY review_id, duplicate) e
		JOIN reviews r ON r.id = e.review_id`, batchID).
		Scan(&p.Reviews, &p.Queued, &p.Running, &p.Done, &p.Failed, &p.LLMCalls, &p.TokensIn, &p.TokensOut,
			&p.FirstStarted, &p.LastFinished)
	if err != nil {
		return BatchProgress{}, fmt.Errorf("progress of batch %s: %w", batchID, err)
	}
	return p, nil
}

// RepoSummary is one repository's part of a batch report.
type RepoSummary struct {
	Repo                string
	Reviews, Done       int
	Failed              int
	Findings            map[string]int // reported findings by severity
	FailedItems         int
	LLMCalls            int
	TokensIn, TokensOut int64
}

// BatchRepoSummaries sums a batch's reviews per repository: reported
// findings by severity (from the stored reports), failed reviews and
// items, and LLM usage (a linked earlier review costs this batch nothing).
func (s *Store) BatchRepoSummaries(ctx context.Context, batchID string) ([]RepoSummary, error) {
	rows, err := s.pool.Query(ctx, `
		WITH e AS (
		    SELECT DISTINCT ON (review_id) review_id, repo, duplicate FROM batch_reviews
		    WHERE batch_id = $1 AND review_id IS NOT NULL ORDER BY review_id, duplicate)
		SELECT e.repo, count(*),
		       count(*) FILTER (WHERE r.status = 'done'),
		       count(*) FILTER (WHERE r.status = 'failed'),
		       coalesce(sum((SELECT count(*) FROM stage_items i WHERE i.review_id = r.id AND i.status = 'failed')), 0),
		       coalesce(sum(r.llm_calls) FILTER (WHERE NOT e.duplicate), 0),
		       coalesce(sum(r.tokens_in) FILTER (WHERE NOT e.duplicate), 0),
		       coalesce(sum(r.tokens_out) FILTER (WHERE NOT e.duplicate), 0),
		       coalesce((SELECT json_object_agg(sev, n) FROM (
		           SELECT f->>'severity' AS sev, count(*) AS n
		           FROM e e2 JOIN reports p ON p.review_id = e2.review_id,
		                json_array_elements(p.json->'findings') f
		           WHERE e2.repo = e.repo GROUP BY 1) s)::text, '{}')
		FROM e JOIN reviews r ON r.id = e.review_id
		GROUP BY e.repo ORDER BY e.repo`, batchID)
	if err != nil {
		return nil, fmt.Errorf("summarise batch %s: %w", batchID, err)
	}
	defer rows.Close()
	var out []RepoSummary
	for rows.Next() {
		var rs RepoSummary
		var sev string
		if err := rows.Scan(&rs.Repo, &rs.Reviews, &rs.Done, &rs.Failed, &rs.FailedItems, &rs.LLMCalls,
			&rs.TokensIn, &rs.TokensOut, &sev); err != nil {
			return nil, fmt.Errorf("summarise batch %s: %w", batchID, err)
		}
		rs.Findings = map[string]int{}
		if err := jsonUnmarshalString(sev, &rs.Findings); err != nil {
			return nil, fmt.Errorf("summarise batch %s: %w", batchID, err)
		}
		out = append(out, rs)
	}
	return out, rows.Err()
}

// BatchFailures lists the failed reviews and unsubmittable entries of a
// batch, by line.
func (s *Store) BatchFailures(ctx context.Context, batchID string) ([]BatchEntry, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT e.line, e.repo, e.base_ref, e.head_ref, coalesce(e.review_id::text, ''),
		       CASE WHEN e.error <> '' THEN e.error ELSE coalesce(r.error, '') END
		FROM batch_reviews e LEFT JOIN reviews r ON r.id = e.review_id
		WHERE e.batch_id = $1 AND (e.review_id IS NULL OR r.status = 'failed')
		ORDER BY e.line`, batchID)
	if err != nil {
		return nil, fmt.Errorf("failures of batch %s: %w", batchID, err)
	}
	defer rows.Close()
	var out []BatchEntry
	for rows.Next() {
		var e BatchEntry
		if err := rows.Scan(&e.Line, &e.Repo, &e.BaseRef, &e.HeadRef, &e.ReviewID, &e.Error); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// ReviewTiming is how long a review waited to be admitted and then ran.
type ReviewTiming struct {
	ID              string
	Kind            string
	Status          string
	Queued, Running time.Duration
}

// BatchTimings returns the timing of every finished review of a batch.
func (s *Store) BatchTimings(ctx context.Context, batchID string) ([]ReviewTiming, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT r.id, r.kind, r.status,
		       extract(epoch FROM coalesce(r.started_at, r.finished_at) - r.created_at),
		       extract(epoch FROM r.finished_at - coalesce(r.started_at, r.finished_at))
		FROM reviews r WHERE r.batch_id = $1 AND r.finished_at IS NOT NULL`, batchID)
	if err != nil {
		return nil, fmt.Errorf("timings of batch %s: %w", batchID, err)
	}
	defer rows.Close()
	var out []ReviewTiming
	for rows.Next() {
		var t ReviewTiming
		var q, r float64
		if err := rows.Scan(&t.ID, &t.Kind, &t.Status, &q, &r); err != nil {
			return nil, err
		}
		t.Queued, t.Running = time.Duration(q*float64(time.Second)), time.Duration(r*float64(time.Second))
		out = append(out, t)
	}
	return out, rows.Err()
}

func jsonUnmarshalString(s string, v any) error { return json.Unmarshal([]byte(s), v) }
