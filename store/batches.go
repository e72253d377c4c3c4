package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Batch statuses: entries are being submitted, all are submitted, or the
// batch was cancelled.
const (
	BatchSubmitting = "submitting"
	BatchSubmitted  = "submitted"
	BatchCancelled  = "cancelled"
)

// Batch is a group of reviews submitted together (a manifest, an org).
type Batch struct {
	ID           string
	Name         string
	Source       string
	Status       string
	Labels       map[string]string
	MaxRunning   int
	Entries      int
	Submitted    int
	Duplicates   int
	SubmitErrors int
	CreatedAt    time.Time
	SubmittedAt  *time.Time
	CancelledAt  *time.Time
}

// BatchEntry is one entry of a batch and the review that answers it.
type BatchEntry struct {
	Line      int
	Repo      string // credentials stripped
	BaseRef   string
	HeadRef   string
	Labels    map[string]string
	DedupeKey string
	ReviewID  string // empty until submitted
	Duplicate bool   // ReviewID is an earlier, identical review
	Error     string // why the entry could not be submitted
}

// CreateBatch stores a batch unless one with its ID exists (a resumed
// submission), and returns the stored batch.
func (s *Store) CreateBatch(ctx context.Context, b Batch) (Batch, error) {
	labels, err := json.Marshal(nonNilMap(b.Labels))
	if err != nil {
		return Batch{}, fmt.Errorf("encode batch labels: %w", err)
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO batches (id, name, source, labels, max_running, entries)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO NOTHING`, b.ID, b.Name, b.Source, labels, b.MaxRunning, b.Entries)
	if err != nil {
		return Batch{}, fmt.Errorf("create batch: %w", err)
	}
	return s.GetBatch(ctx, b.ID)
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

const batchColumns = `id, name, source, status, labels, max_running, entries, submitted, duplicates,
	submit_errors, created_at, submitted_at, cancelled_at`

func scanBatch(row pgx.Row) (Batch, error) {
	var b Batch
	var labels []byte
	err := row.Scan(&b.ID, &b.Name, &b.Source, &b.Status, &labels, &b.MaxRunning, &b.Entries, &b.Submitted,
		&b.Duplicates, &b.SubmitErrors, &b.CreatedAt, &b.SubmittedAt, &b.CancelledAt)
	if err != nil {
		return Batch{}, translate(err)
	}
	_ = json.Unmarshal(labels, &b.Labels)
	return b, nil
}

// GetBatch loads one batch.
func (s *Store) GetBatch(ctx context.Context, id string) (Batch, error) {
	b, err := scanBatch(s.pool.QueryRow(ctx, `SELECT `+batchColumns+` FROM batches WHERE id = $1`, id))
	if err != nil {
		return Batch{}, fmt.Errorf("get batch %s: %w", id, err)
	}
	return b, nil
}

// ListBatches returns the newest batches first, at most limit.
func (s *Store) ListBatches(ctx context.Context, limit int) ([]Batch, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+batchColumns+` FROM batches ORDER BY created_at DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("list batches: %w", err)
	}
	defer rows.Close()
	var out []Batch
	for rows.Next() {
		b, err := scanBatch(rows)
		if err != nil {
			return nil, fmt.Errorf("list batches: %w", err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// SaveBatchEntry records an entry of a batch (its review, or why it has
// none), replacing what an earlier, interrupted submission recorded.
func (s *Store) SaveBatchEntry(ctx context.Context, batchID string, e BatchEntry) error {
	labels, err := json.Marshal(nonNilMap(e.Labels))
	if err != nil {
		return fmt.Errorf("encode entry labels: %w", err)
	}
	var rid any
	if e.ReviewID != "" {
		rid = e.ReviewID
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO batch_reviews (batch_id, line, repo, base_ref, head_ref, labels, dedupe_key, review_id, duplicate, error)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)
		ON CONFLICT (batch_id, line) DO UPDATE
		SET repo = EXCLUDED.repo, base_ref = EXCLUDED.base_ref, head_ref = EXCLUDED.head_ref,
		    labels = EXCLUDED.labels, dedupe_key = EXCLUDED.dedupe_key, review_id = EXCLUDED.review_id,
		    duplicate = EXCLUDED.duplicate, error = EXCLUDED.error`,
		batchID, e.Line, e.Repo, e.BaseRef, e.HeadRef, labels, e.DedupeKey, rid, e.Duplicate, e.Error)
	if err != nil {
		return fmt.Errorf("save entry %d of batch %s: %w", e.Line, batchID, err)
	}
	return nil
}

// BatchEntries lists a batch's recorded entries by line.
func (s *Store) BatchEntries(ctx context.Context, batchID string) ([]BatchEntry, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT line, repo, base_ref, head_ref, labels, dedupe_key, coalesce(review_id::text, ''), duplicate, error
		FROM batch_reviews WHERE batch_id = $1 ORDER BY line`, batchID)
	if err != nil {
		return nil, fmt.Errorf("entries of batch %s: %w", batchID, err)
	}
	defer rows.Close()
	var out []BatchEntry
	for rows.Next() {
		var e BatchEntry
		var labels []byte
		if err := rows.Scan(&e.Line, &e.Repo, &e.BaseRef, &e.HeadRef, &labels, &e.DedupeKey, &e.ReviewID,
			&e.Duplicate, &e.Error); err != nil {
			return nil, fmt.Errorf("entries of batch %s: %w", batchID, err)
		}
		_ = json.Unmarshal(labels, &e.Labels)
		out = append(out, e)
	}
	return out, rows.Err()
}

// FinishBatchSubmission recounts a batch's entries and marks it submitted
// (a cancelled batch stays cancelled).
func (s *Store) FinishBatchSubmission(ctx context.Context, batchID string) error {
	_, err := s.pool.Exec(ctx, `
		UPDATE batches b SET
		    submitted = c.submitted, duplicates = c.duplicates, submit_errors = c.errors,
		    status = CASE WHEN b.status = 'cancelled' THEN b.status ELSE 'submitted' END,
		    submitted_at = coalesce(b.submitted_at, now())
		FROM (SELECT count(*) FILTER (WHERE review_id IS NOT NULL) AS submitted,
		             count(*) FILTER (WHERE duplicate) AS duplicates,
		             count(*) FILTER (WHERE review_id IS NULL AND error <> '') AS errors
		      FROM batch_reviews WHERE batch_id = $1) c
		WHERE b.id = $1`, batchID)
	if err != nil {
		return fmt.Errorf("finish submission of batch %s: %w", batchID, err)
	}
	return nil
}

// FindDuplicate returns an earlier review identical to the one keyed by
// dedupeKey: one already done, or one of the same batch that has not
// failed. It returns "" when there is none.
func (s *Store) FindDuplicate(ctx context.Context, dedupeKey, batchID string) (string, error) {
	var id string
	err := s.pool.QueryRow(ctx, `
		SELECT id FROM reviews
		WHERE dedupe_key = $1 AND (status = 'done' OR (batch_id = $2::uuid AND status <> 'failed'))
		ORDER BY (status = 'done') DESC, created_at LIMIT 1`, dedupeKey, batchID).Scan(&id)
	if err = translate(err); err == ErrNotFound {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("look for a review identical to %s: %w", dedupeKey, err)
	}
	return id, nil
}

// CancelBatch marks a batch cancelled and fails its queued and running
// reviews: queued ones never start, running ones stop at their next item
// (a handler does nothing for a review that is not running). It returns
// how many reviews it stopped.
func (s *Store) CancelBatch(ctx context.Context, batchID string) (int, error) {
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
			UPDATE batches SET status = 'cancelled', cancelled_at = coalesce(cancelled_at, now()) WHERE id = $1`, batchID)
		if err != nil {
			return fmt.Errorf("cancel batch %s: %w", batchID, translate(err))
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("cancel batch %s: %w", batchID, ErrNotFound)
		}
		tag, err = tx.Exec(ctx, `
			WITH target AS (
			    SELECT id FROM reviews WHERE batch_id = $1 AND status IN ('queued', 'running')
			    ORDER BY id FOR UPDATE)
			UPDATE reviews r SET status = 'failed', finished_at = now(),
			       error = 'cancelled with its batch (was ' || r.status || ' in stage ' || r.stage || ')'
			FROM target t
			WHERE r.id = t.id AND r.status IN ('queued', 'running')`, batchID)
		if err != nil {
			return fmt.Errorf("stop the reviews of batch %s: %w", batchID, err)
		}
		n = int(tag.RowsAffected())
		return nil
	})
	return n, err
}
