package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// BatchReview is one entry of a batch with the state of the review that
// answers it, for following a batch review by review.
type BatchReview struct {
	Line    int
	Repo    string // credentials stripped
	BaseRef string
	HeadRef string
	Labels  map[string]string
	// ReviewID is the entry's review: its own, or for a linked entry the
	// earlier, identical review (empty while the entry is not submitted,
	// and when it could not be).
	ReviewID string
	// Linked says ReviewID is an identical review this entry was linked to
	// instead of being reviewed again; LinkedLine is the line of this batch
	// that owns that review (0 when it belongs to an earlier batch).
	Linked     bool
	LinkedLine int
	// Status is the review's status (queued, running, done, failed), or
	// "unsubmitted" for an entry that could not be submitted.
	Status string
	Stage  string
	// Error is why the entry could not be submitted, or why its review
	// failed.
	Error string
	// Findings counts the review's reported findings by severity (from
	// its stored report; empty until it has one).
	Findings map[string]int
}

// EntryCounts splits a batch's entries by what became of them, counted
// from the recorded entries, so they agree with the reviews while the
// batch is still being submitted.
type EntryCounts struct {
	Entries  int // in the batch's source
	New      int // submitted as a review of their own
	Linked   int // linked to an identical review
	Errors   int // could not be submitted
	Recorded int // New + Linked + Errors
}

// Pending is how many entries are not submitted yet.
func (c EntryCounts) Pending() int { return max(c.Entries-c.Recorded, 0) }

// BatchEntryCounts counts a batch's recorded entries by outcome.
func (s *Store) BatchEntryCounts(ctx context.Context, batchID string) (EntryCounts, error) {
	var c EntryCounts
	err := s.pool.QueryRow(ctx, `
		SELECT b.entries,
		       count(e.line) FILTER (WHERE e.review_id IS NOT NULL AND NOT e.duplicate),
		       count(e.line) FILTER (WHERE e.review_id IS NOT NULL AND e.duplicate),
		       count(e.line) FILTER (WHERE e.review_id IS NULL AND e.error <> '')
		FROM batches b LEFT JOIN batch_reviews e ON e.batch_id = b.id
		WHERE b.id = $1 GROUP BY b.entries`, batchID).Scan(&c.Entries, &c.New, &c.Linked, &c.Errors)
	if err != nil {
		return EntryCounts{}, fmt.Errorf("count the entries of batch %s: %w", batchID, translate(err))
	}
	c.Recorded = c.New + c.Linked + c.Errors
	return c, nil
}

// BatchReviews lists a batch's recorded entries by line, each with its
// review's status and reported findings.
func (s *Store) BatchReviews(ctx context.Context, batchID string) ([]BatchReview, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT e.line, e.repo, e.base_ref, e.head_ref, e.labels, coalesce(e.review_id::text, ''), e.duplicate,
		       coalesce((SELECT min(o.line) FROM batch_reviews o
		                 WHERE e.duplicate AND o.batch_id = e.batch_id AND o.review_id = e.review_id AND NOT o.duplicate), 0),
		       CASE WHEN e.review_id IS NULL THEN 'unsubmitted' ELSE r.status END,
		       coalesce(r.stage, ''),
		       CASE WHEN e.error <> '' THEN e.error ELSE coalesce(r.error, '') END,
		       coalesce((SELECT json_object_agg(sev, n) FROM (
		           SELECT f->>'severity' AS sev, count(*) AS n
		           FROM reports p, json_array_elements(p.json->'findings') f
		           WHERE p.review_id = e.review_id GROUP BY 1) s)::text, '{}')
		FROM batch_reviews e LEFT JOIN reviews r ON r.id = e.review_id
		WHERE e.batch_id = $1
		ORDER BY e.line`, batchID)
	if err != nil {
		return nil, fmt.Errorf("reviews of batch %s: %w", batchID, err)
	}
	defer rows.Close()
	var out []BatchReview
	for rows.Next() {
		var br BatchReview
		var labels []byte
		var sev string
		if err := rows.Scan(&br.Line, &br.Repo, &br.BaseRef, &br.HeadRef, &labels, &br.ReviewID, &br.Linked,
			&br.LinkedLine, &br.Status, &br.Stage, &br.Error, &sev); err != nil {
			return nil, fmt.Errorf("reviews of batch %s: %w", batchID, err)
		}
		if err := json.Unmarshal(labels, &br.Labels); err != nil {
			return nil, fmt.Errorf("labels of entry %d of batch %s: %w", br.Line, batchID, err)
		}
		br.Findings = map[string]int{}
		if err := json.Unmarshal([]byte(sev), &br.Findings); err != nil {
			return nil, fmt.Errorf("findings of entry %d of batch %s: %w", br.Line, batchID, err)
		}
		out = append(out, br)
	}
	return out, rows.Err()
}
