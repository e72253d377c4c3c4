package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// CreateReview stores a review, its files and its first stage's ledger rows
// in one transaction and marks it running (or queued when nr.Queued). It
// returns the review ID.
func (s *Store) CreateReview(ctx context.Context, nr review.NewReview) (string, error) {
	if nr.ID == "" {
		nr.ID = uuid.NewString()
	}
	if nr.Config == nil {
		nr.Config = json.RawMessage(`{}`)
	}
	if nr.SkippedStages == nil {
		nr.SkippedStages = []string{}
	}
	stage := review.StageIntent
	if len(nr.Items) > 0 {
		stage = nr.Items[0].Stage
	}
	if nr.Kind == "" {
		nr.Kind = review.KindInteractive
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var batch any
		if nr.BatchID != "" {
			batch = nr.BatchID
		}
		// A queued review has no deadline yet: admission sets it. Until
		// then deadline_at lies far ahead so the expiry sweep ignores it.
		_, err := tx.Exec(ctx, `
			INSERT INTO reviews (id, batch_id, repo, source, base_ref, head_ref, base_sha, head_sha,
			                     snapshot, status, stage, intent_mode, skipped_stages, config,
			                     started_at, deadline_at, purpose, kind, timeout_ms, dedupe_key)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,
			        CASE WHEN $16 THEN 'queued' ELSE 'running' END,$10,$11,$12,$13,
			        CASE WHEN $16 THEN NULL ELSE now() END,
			        CASE WHEN $16 THEN now() + interval '100 years' ELSE now() + $14::interval END,
			        $15, $17, $18, $19)`,
			nr.ID, batch, nr.Repo, nr.Source, nr.BaseRef, nr.HeadRef, nr.BaseSHA, nr.HeadSHA,
			nr.Snapshot, string(stage), nr.IntentMode, nr.SkippedStages, nr.Config,
			fmt.Sprintf("%d milliseconds", nr.Timeout.Milliseconds()), nr.Purpose,
			nr.Queued, nr.Kind, nr.Timeout.Milliseconds(), nr.DedupeKey)
		if err != nil {
			return fmt.Errorf("insert review: %w", err)
		}
		rows := make([][]any, 0, len(nr.Files))
		for _, f := range nr.Files {
			rows = append(rows, []any{nr.ID, f.Path, f.OldPath, f.Change, f.Binary, f.SkipReason,
				f.Additions, f.Deletions, nonNilInts(f.ChangedLines), f.Diff, f.Content, nonNilStrings(f.Packs), f.Rules})
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"review_files"},
			[]string{"review_id", "path", "old_path", "change", "is_binary", "skip_reason", "additions",
				"deletions", "changed_lines", "diff", "content", "packs", "repo_rules"},
			pgx.CopyFromRows(rows)); err != nil {
			return fmt.Errorf("insert review files: %w", err)
		}
		if err := copyItems(ctx, tx, nr.ID, nr.Items); err != nil {
			return err
		}
		if err := saveConfigWarnings(ctx, tx, nr.ID, nr.ConfigWarnings); err != nil {
			return err
		}
		return saveIncremental(ctx, tx, nr.ID, nr.Incremental)
	})
	if err != nil {
		return "", fmt.Errorf("create review: %w", err)
	}
	return nr.ID, nil
}

func nonNilInts(v []int) []int {
	if v == nil {
		return []int{}
	}
	return v
}

func nonNilStrings(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

const reviewColumns = `id, coalesce(batch_id::text, ''), repo, source, base_ref, head_ref, base_sha, head_sha,
	snapshot, snapshot_fallback, purpose, status, stage, intent_mode, skipped_stages, config, error, incomplete, failed_items, llm_calls, tokens_in,
	tokens_out, created_at, started_at, finished_at, deadline_at, kind, dedupe_key, skipped_budget, cost`

func scanReview(row pgx.Row) (review.Review, error) {
	var r review.Review
	var stage string
	err := row.Scan(&r.ID, &r.BatchID, &r.Repo, &r.Source, &r.BaseRef, &r.HeadRef, &r.BaseSHA,
		&r.HeadSHA, &r.Snapshot, &r.SnapshotFallback, &r.Purpose, &r.Status, &stage, &r.IntentMode, &r.SkippedStages, &r.Config,
		&r.Error, &r.Incomplete, &r.FailedItems, &r.LLMCalls, &r.TokensIn, &r.TokensOut, &r.CreatedAt, &r.StartedAt,
		&r.FinishedAt, &r.DeadlineAt, &r.Kind, &r.DedupeKey, &r.SkippedBudget, &r.Cost)
	r.Stage = review.Stage(stage)
	return r, translate(err)
}

// SetSnapshotFallback records why a worker fell back to the review's stored
// changed files for its head tree. The first reason is kept: it is the one
// the expert runs that followed were given.
func (s *Store) SetSnapshotFallback(ctx context.Context, id, reason string) error {
	_, err := s.pool.Exec(ctx, `UPDATE reviews SET snapshot_fallback = $2 WHERE id = $1 AND snapshot_fallback = ''`, id, reason)
	if err != nil {
		return fmt.Errorf("record snapshot fallback of %s: %w", id, err)
	}
	return nil
}

// GetReview loads one review.
func (s *Store) GetReview(ctx context.Context, id string) (review.Review, error) {
	r, err := scanReview(s.pool.QueryRow(ctx, `SELECT `+reviewColumns+` FROM reviews WHERE id = $1`, id))
	if err != nil {
		return review.Review{}, fmt.Errorf("get review %s: %w", id, err)
	}
	return r, nil
}

// ListReviews returns the newest reviews first, at most limit.
func (s *Store) ListReviews(ctx context.Context, limit int) ([]review.Review, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+reviewColumns+` FROM reviews ORDER BY created_at DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("list reviews: %w", err)
	}
	defer rows.Close()
	var out []review.Review
	for rows.Next() {
		r, err := scanReview(rows)
		if err != nil {
			return nil, fmt.Errorf("list reviews: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// FailReview marks a running review failed with a reason. It reports
// whether the review was still running.
func (s *Store) FailReview(ctx context.Context, id, reason string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `
		UPDATE reviews SET status = 'failed', error = $2, finished_at = now(),
		       failed_items = (SELECT count(*) FROM stage_items WHERE review_id = $1 AND status = 'failed'),
		       tokens_in = c.i, tokens_out = c.o, cost = c.cost
		FROM (SELECT coalesce(sum(tokens_in), 0) AS i, coalesce(sum(tokens_out), 0) AS o, coalesce(sum(cost), 0) AS cost
		      FROM llm_calls WHERE review_id = $1) c
		WHERE id = $1 AND status IN ('queued', 'running')`, id, reason)
	if err != nil {
		return false, fmt.Errorf("fail review %s: %w", id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// ListFiles returns every file of a review, ordered by path.
func (s *Store) ListFiles(ctx context.Context, reviewID string) ([]review.File, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT path, old_path, change, is_binary, skip_reason, additions, deletions, changed_lines,
		       diff, content, packs, repo_rules
		FROM review_files WHERE review_id = $1 ORDER BY path`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list files of %s: %w", reviewID, err)
	}
	defer rows.Close()
	var out []review.File
	for rows.Next() {
		var f review.File
		if err := rows.Scan(&f.Path, &f.OldPath, &f.Change, &f.Binary, &f.SkipReason, &f.Additions,
			&f.Deletions, &f.ChangedLines, &f.Diff, &f.Content, &f.Packs, &f.Rules); err != nil {
			return nil, fmt.Errorf("list files of %s: %w", reviewID, err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// GetFile loads one file of a review.
func (s *Store) GetFile(ctx context.Context, reviewID, path string) (review.File, error) {
	var f review.File
	err := s.pool.QueryRow(ctx, `
		SELECT path, old_path, change, is_binary, skip_reason, additions, deletions, changed_lines,
		       diff, content, packs, repo_rules
		FROM review_files WHERE review_id = $1 AND path = $2`, reviewID, path).
		Scan(&f.Path, &f.OldPath, &f.Change, &f.Binary, &f.SkipReason, &f.Additions, &f.Deletions,
			&f.ChangedLines, &f.Diff, &f.Content, &f.Packs, &f.Rules)
	if err != nil {
		return review.File{}, fmt.Errorf("get file %s of %s: %w", path, reviewID, translate(err))
	}
	return f, nil
}

// SetFilePacks records which progressive-context packs a file's intent prompt used.
func (s *Store) SetFilePacks(ctx context.Context, reviewID, path string, packs []string) error {
	_, err := s.pool.Exec(ctx, `UPDATE review_files SET packs = $3 WHERE review_id = $1 AND path = $2`,
		reviewID, path, nonNilStrings(packs))
	if err != nil {
		return fmt.Errorf("set packs of %s: %w", path, err)
	}
	return nil
}

// ListFileSummaries returns every file of a review, by path, without diffs
// or contents: the list of what a change touches.
func (s *Store) ListFileSummaries(ctx context.Context, reviewID string) ([]review.FileSummary, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT path, old_path, change, skip_reason, additions, deletions
		FROM review_files WHERE review_id = $1 ORDER BY path`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list file summaries of %s: %w", reviewID, err)
	}
	defer rows.Close()
	var out []review.FileSummary
	for rows.Next() {
		var f review.FileSummary
		if err := rows.Scan(&f.Path, &f.OldPath, &f.Change, &f.SkipReason, &f.Additions, &f.Deletions); err != nil {
			return nil, fmt.Errorf("scan file summary of %s: %w", reviewID, err)
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list file summaries of %s: %w", reviewID, err)
	}
	return out, nil
}

// CountReviewsByStatus counts the reviews in each status (every status
// present, zero included).
func (s *Store) CountReviewsByStatus(ctx context.Context) (map[review.ReviewStatus]int64, error) {
	out := map[review.ReviewStatus]int64{review.ReviewQueued: 0, review.ReviewRunning: 0, review.ReviewDone: 0, review.ReviewFailed: 0}
	rows, err := s.pool.Query(ctx, `SELECT status, count(*) FROM reviews GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("count reviews by status: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var status review.ReviewStatus
		var n int64
		if err := rows.Scan(&status, &n); err != nil {
			return nil, fmt.Errorf("count reviews by status: %w", err)
		}
		out[status] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count reviews by status: %w", err)
	}
	return out, nil
}
