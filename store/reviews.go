package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
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
		q := s.q.WithTx(tx)
		err := q.InsertReview(ctx, sqlcdb.InsertReviewParams{
			ID: nr.ID, BatchID: nonEmpty(nr.BatchID), Repo: nr.Repo, Source: nr.Source,
			BaseRef: nr.BaseRef, HeadRef: nr.HeadRef, BaseSHA: nr.BaseSHA, HeadSHA: nr.HeadSHA,
			Snapshot: nr.Snapshot, Queued: nr.Queued, Stage: stage, IntentMode: nr.IntentMode,
			SkippedStages: nr.SkippedStages, Config: nr.Config, Timeout: nr.Timeout,
			Purpose: nr.Purpose, Kind: nr.Kind, TimeoutMS: nr.Timeout.Milliseconds(), DedupeKey: nr.DedupeKey,
		})
		if err != nil {
			return fmt.Errorf("insert review: %w", err)
		}
		rows := make([]sqlcdb.CopyReviewFilesParams, 0, len(nr.Files))
		for _, f := range nr.Files {
			rows = append(rows, sqlcdb.CopyReviewFilesParams{
				ReviewID: nr.ID, Path: f.Path, OldPath: f.OldPath, Change: f.Change, IsBinary: f.Binary,
				SkipReason: f.SkipReason, Additions: int32(f.Additions), Deletions: int32(f.Deletions),
				ChangedLines: int32s(f.ChangedLines), Diff: f.Diff, Content: f.Content,
				Packs: nonNilStrings(f.Packs), RepoRules: f.Rules,
			})
		}
		if _, err := q.CopyReviewFiles(ctx, rows); err != nil {
			return fmt.Errorf("insert review files: %w", err)
		}
		if err := copyItems(ctx, q, nr.ID, nr.Items); err != nil {
			return err
		}
		if err := saveConfigWarnings(ctx, q, nr.ID, nr.ConfigWarnings); err != nil {
			return err
		}
		return saveIncremental(ctx, q, nr.ID, nr.Incremental)
	})
	if err != nil {
		return "", fmt.Errorf("create review: %w", err)
	}
	return nr.ID, nil
}

func reviewFromRow(r sqlcdb.Review) review.Review {
	return review.Review{
		ID: r.ID, BatchID: orEmpty(r.BatchID), Repo: r.Repo, Source: r.Source, BaseRef: r.BaseRef,
		HeadRef: r.HeadRef, BaseSHA: r.BaseSHA, HeadSHA: r.HeadSHA, Snapshot: r.Snapshot,
		SnapshotFallback: r.SnapshotFallback, Purpose: r.Purpose, Status: r.Status, Stage: r.Stage,
		IntentMode: r.IntentMode, SkippedStages: r.SkippedStages, Config: r.Config, Error: r.Error,
		Incomplete: r.Incomplete, FailedItems: int(r.FailedItems), LLMCalls: int(r.LLMCalls),
		TokensIn: r.TokensIn, TokensOut: r.TokensOut, CreatedAt: r.CreatedAt, StartedAt: r.StartedAt,
		FinishedAt: r.FinishedAt, DeadlineAt: r.DeadlineAt, Kind: r.Kind, DedupeKey: r.DedupeKey,
		SkippedBudget: int(r.SkippedBudget), Cost: r.Cost,
	}
}

// SetSnapshotFallback records why a worker fell back to the review's stored
// changed files for its head tree. The first reason is kept: it is the one
// the expert runs that followed were given.
func (s *Store) SetSnapshotFallback(ctx context.Context, id, reason string) error {
	if err := s.q.SetSnapshotFallback(ctx, sqlcdb.SetSnapshotFallbackParams{ID: id, Reason: reason}); err != nil {
		return fmt.Errorf("record snapshot fallback of %s: %w", id, err)
	}
	return nil
}

// GetReview loads one review.
func (s *Store) GetReview(ctx context.Context, id string) (review.Review, error) {
	r, err := s.q.GetReview(ctx, id)
	if err != nil {
		return review.Review{}, fmt.Errorf("get review %s: %w", id, translate(err))
	}
	return reviewFromRow(r), nil
}

// ListReviews returns the newest reviews first, at most limit.
func (s *Store) ListReviews(ctx context.Context, limit int) ([]review.Review, error) {
	rows, err := s.q.ListReviews(ctx, int32(min(limit, math.MaxInt32)))
	if err != nil {
		return nil, fmt.Errorf("list reviews: %w", err)
	}
	var out []review.Review
	for _, r := range rows {
		out = append(out, reviewFromRow(r))
	}
	return out, nil
}

// FailReview marks a running review failed with a reason. It reports
// whether the review was still running.
func (s *Store) FailReview(ctx context.Context, id, reason string) (bool, error) {
	n, err := s.q.FailReview(ctx, sqlcdb.FailReviewParams{ID: id, Reason: reason})
	if err != nil {
		return false, fmt.Errorf("fail review %s: %w", id, err)
	}
	return n == 1, nil
}

func fileFromRow(r sqlcdb.ListFilesRow) review.File {
	return review.File{
		Path: r.Path, OldPath: r.OldPath, Change: r.Change, Binary: r.IsBinary, SkipReason: r.SkipReason,
		Additions: int(r.Additions), Deletions: int(r.Deletions), ChangedLines: ints(r.ChangedLines),
		Diff: r.Diff, Content: r.Content, Packs: r.Packs, Rules: r.RepoRules,
	}
}

// ListFiles returns every file of a review, ordered by path.
func (s *Store) ListFiles(ctx context.Context, reviewID string) ([]review.File, error) {
	rows, err := s.q.ListFiles(ctx, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list files of %s: %w", reviewID, err)
	}
	var out []review.File
	for _, r := range rows {
		out = append(out, fileFromRow(r))
	}
	return out, nil
}

// GetFile loads one file of a review.
func (s *Store) GetFile(ctx context.Context, reviewID, path string) (review.File, error) {
	r, err := s.q.GetFile(ctx, sqlcdb.GetFileParams{ReviewID: reviewID, Path: path})
	if err != nil {
		return review.File{}, fmt.Errorf("get file %s of %s: %w", path, reviewID, translate(err))
	}
	return fileFromRow(sqlcdb.ListFilesRow(r)), nil
}

// GetFiles returns the named files of a review in the order named; a path
// the review does not have is ErrNotFound.
func (s *Store) GetFiles(ctx context.Context, reviewID string, paths []string) ([]review.File, error) {
	rows, err := s.q.GetFiles(ctx, sqlcdb.GetFilesParams{ReviewID: reviewID, Paths: nonNilStrings(paths)})
	if err != nil {
		return nil, fmt.Errorf("get %d files of %s: %w", len(paths), reviewID, err)
	}
	byPath := make(map[string]review.File, len(rows))
	for _, r := range rows {
		byPath[r.Path] = fileFromRow(sqlcdb.ListFilesRow(r))
	}
	out := make([]review.File, 0, len(paths))
	for _, p := range paths {
		f, ok := byPath[p]
		if !ok {
			return nil, fmt.Errorf("get file %s of %s: %w", p, reviewID, ErrNotFound)
		}
		out = append(out, f)
	}
	return out, nil
}

// SetFilesPacks records, in one statement, which progressive-context packs
// the intent prompt of each file (by path) used.
func (s *Store) SetFilesPacks(ctx context.Context, reviewID string, packs map[string][]string) error {
	if len(packs) == 0 {
		return nil
	}
	m := make(map[string][]string, len(packs))
	for p, names := range packs {
		m[p] = nonNilStrings(names)
	}
	doc, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode the packs of %d files: %w", len(packs), err)
	}
	if err := s.q.SetFilesPacks(ctx, sqlcdb.SetFilesPacksParams{ReviewID: reviewID, Packs: doc}); err != nil {
		return fmt.Errorf("set the packs of %d files of %s: %w", len(packs), reviewID, err)
	}
	return nil
}

// ListFileSummaries returns every file of a review, by path, without diffs
// or contents: the list of what a change touches.
func (s *Store) ListFileSummaries(ctx context.Context, reviewID string) ([]review.FileSummary, error) {
	rows, err := s.q.ListFileSummaries(ctx, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list file summaries of %s: %w", reviewID, err)
	}
	var out []review.FileSummary
	for _, r := range rows {
		out = append(out, review.FileSummary{Path: r.Path, OldPath: r.OldPath, Change: r.Change,
			SkipReason: r.SkipReason, Additions: int(r.Additions), Deletions: int(r.Deletions)})
	}
	return out, nil
}

// CountReviewsByStatus counts the reviews in each status (every status
// present, zero included).
func (s *Store) CountReviewsByStatus(ctx context.Context) (map[review.ReviewStatus]int64, error) {
	out := map[review.ReviewStatus]int64{review.ReviewQueued: 0, review.ReviewRunning: 0, review.ReviewDone: 0, review.ReviewFailed: 0}
	rows, err := s.q.CountReviewsByStatus(ctx)
	if err != nil {
		return nil, fmt.Errorf("count reviews by status: %w", err)
	}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}
