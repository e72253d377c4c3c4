package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
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
	err = s.q.CreateBatch(ctx, sqlcdb.CreateBatchParams{ID: b.ID, Name: b.Name, Source: b.Source, Labels: labels,
		MaxRunning: i32(b.MaxRunning), Entries: i32(b.Entries)})
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

func batchFromRow(r sqlcdb.Batch) Batch {
	b := Batch{ID: r.ID, Name: r.Name, Source: r.Source, Status: r.Status, MaxRunning: int(r.MaxRunning),
		Entries: int(r.Entries), Submitted: int(r.Submitted), Duplicates: int(r.Duplicates),
		SubmitErrors: int(r.SubmitErrors), CreatedAt: r.CreatedAt, SubmittedAt: r.SubmittedAt, CancelledAt: r.CancelledAt}
	_ = json.Unmarshal(r.Labels, &b.Labels)
	return b
}

// GetBatch loads one batch.
func (s *Store) GetBatch(ctx context.Context, id string) (Batch, error) {
	r, err := s.q.GetBatch(ctx, id)
	if err != nil {
		return Batch{}, fmt.Errorf("get batch %s: %w", id, translate(err))
	}
	return batchFromRow(r), nil
}

// ListBatches returns the newest batches first, at most limit.
func (s *Store) ListBatches(ctx context.Context, limit int) ([]Batch, error) {
	rows, err := s.q.ListBatches(ctx, i32(limit))
	if err != nil {
		return nil, fmt.Errorf("list batches: %w", err)
	}
	var out []Batch
	for _, r := range rows {
		out = append(out, batchFromRow(r))
	}
	return out, nil
}

// SaveBatchEntry records an entry of a batch (its review, or why it has
// none), replacing what an earlier, interrupted submission recorded.
func (s *Store) SaveBatchEntry(ctx context.Context, batchID string, e BatchEntry) error {
	labels, err := json.Marshal(nonNilMap(e.Labels))
	if err != nil {
		return fmt.Errorf("encode entry labels: %w", err)
	}
	err = s.q.SaveBatchEntry(ctx, sqlcdb.SaveBatchEntryParams{BatchID: batchID, Line: i32(e.Line), Repo: e.Repo,
		BaseRef: e.BaseRef, HeadRef: e.HeadRef, Labels: labels, DedupeKey: e.DedupeKey, ReviewID: nonEmpty(e.ReviewID),
		Duplicate: e.Duplicate, Error: e.Error})
	if err != nil {
		return fmt.Errorf("save entry %d of batch %s: %w", e.Line, batchID, err)
	}
	return nil
}

// BatchEntries lists a batch's recorded entries by line.
func (s *Store) BatchEntries(ctx context.Context, batchID string) ([]BatchEntry, error) {
	rows, err := s.q.BatchEntries(ctx, batchID)
	if err != nil {
		return nil, fmt.Errorf("entries of batch %s: %w", batchID, err)
	}
	var out []BatchEntry
	for _, r := range rows {
		e := BatchEntry{Line: int(r.Line), Repo: r.Repo, BaseRef: r.BaseRef, HeadRef: r.HeadRef, DedupeKey: r.DedupeKey,
			ReviewID: orEmpty(r.ReviewID), Duplicate: r.Duplicate, Error: r.Error}
		_ = json.Unmarshal(r.Labels, &e.Labels)
		out = append(out, e)
	}
	return out, nil
}

// FinishBatchSubmission recounts a batch's entries and marks it submitted
// (a cancelled batch stays cancelled).
func (s *Store) FinishBatchSubmission(ctx context.Context, batchID string) error {
	if err := s.q.FinishBatchSubmission(ctx, batchID); err != nil {
		return fmt.Errorf("finish submission of batch %s: %w", batchID, err)
	}
	return nil
}

// FindDuplicate returns an earlier review identical to the one keyed by
// dedupeKey: one already done, or one of the same batch that has not
// failed. It returns "" when there is none.
func (s *Store) FindDuplicate(ctx context.Context, dedupeKey, batchID string) (string, error) {
	id, err := s.q.FindDuplicate(ctx, sqlcdb.FindDuplicateParams{DedupeKey: dedupeKey, BatchID: nonEmpty(batchID)})
	if err = translate(err); errors.Is(err, ErrNotFound) {
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
		q := s.q.WithTx(tx)
		cancelled, err := q.CancelBatch(ctx, batchID)
		if err != nil {
			return fmt.Errorf("cancel batch %s: %w", batchID, translate(err))
		}
		if cancelled == 0 {
			return fmt.Errorf("cancel batch %s: %w", batchID, ErrNotFound)
		}
		stopped, err := q.StopBatchReviews(ctx, batchID)
		if err != nil {
			return fmt.Errorf("stop the reviews of batch %s: %w", batchID, err)
		}
		n = int(stopped)
		return nil
	})
	return n, err
}
