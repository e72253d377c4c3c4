package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
)

func saveIncremental(ctx context.Context, q *sqlcdb.Queries, id string, inc review.Incremental) error {
	if err := q.LinkReview(ctx, sqlcdb.LinkReviewParams{ID: id, SinceReview: nonEmpty(inc.Since), ChangeKey: inc.ChangeKey}); err != nil {
		return fmt.Errorf("link review to %s: %w", inc.Since, err)
	}
	carried := map[string]bool{}
	for _, p := range inc.Carried {
		carried[p] = true
	}
	rows := make([]sqlcdb.CopyFileResultsParams, 0, len(inc.FileKeys))
	for path, key := range inc.FileKeys {
		rows = append(rows, sqlcdb.CopyFileResultsParams{ReviewID: id, Path: path, Key: key, Carried: carried[path]})
	}
	if _, err := q.CopyFileResults(ctx, rows); err != nil {
		return fmt.Errorf("store file result keys: %w", err)
	}
	if inc.Since == "" || len(inc.Carried) == 0 {
		return nil
	}
	return carryFindings(ctx, q, id, inc.Since, inc.Carried)
}

// carryFindings copies the active and dropped findings of the given files
// from review `from` into review `to`, with their verdicts and expert
// runs, each copy naming its original in carried_from. Merged findings are
// not copied: the finding they were folded into is.
func carryFindings(ctx context.Context, q *sqlcdb.Queries, to, from string, paths []string) error {
	if err := q.CarryFindings(ctx, sqlcdb.CarryFindingsParams{ToReview: to, FromReview: from, Paths: paths}); err != nil {
		return fmt.Errorf("carry findings from %s: %w", from, err)
	}
	if err := q.CarryVerdicts(ctx, to); err != nil {
		return fmt.Errorf("carry verdicts from %s: %w", from, err)
	}
	if err := q.CarryExpertRuns(ctx, to); err != nil {
		return fmt.Errorf("carry expert runs from %s: %w", from, err)
	}
	return nil
}

// PreviousReview returns the newest review of repo on change line
// changeKey (for example a pull request) that finished complete, or ""
// when there is none. It is the default base of an incremental review.
func (s *Store) PreviousReview(ctx context.Context, repo, changeKey string) (string, error) {
	if changeKey == "" {
		return "", nil
	}
	id, err := s.q.PreviousReview(ctx, sqlcdb.PreviousReviewParams{Repo: repo, ChangeKey: changeKey})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find the previous review of %s %s: %w", repo, changeKey, err)
	}
	return id, nil
}

// FileResultKeys returns the result key of each file a review reviewed
// (or carried).
func (s *Store) FileResultKeys(ctx context.Context, reviewID string) (map[string]string, error) {
	rows, err := s.q.FileResultKeys(ctx, reviewID)
	if err != nil {
		return nil, fmt.Errorf("file result keys of %s: %w", reviewID, err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r.Path] = r.Key
	}
	return out, nil
}

// SinceReview returns the review a review was made incrementally against
// ("" when none).
func (s *Store) SinceReview(ctx context.Context, reviewID string) (string, error) {
	since, err := s.q.SinceReview(ctx, reviewID)
	if err != nil {
		return "", fmt.Errorf("since review of %s: %w", reviewID, translate(err))
	}
	return orEmpty(since), nil
}

// ResolveSince marks resolved (resolved_in = this review) the findings the
// earlier review this one builds on reported (active ones: not dropped or
// merged) that sit on files this review did not carry — it re-reviewed
// them, or they left the change — and whose fingerprint no finding
// reviewed here has. A file still in the change but skipped now (ignored
// by the repository configuration, grown too large) resolves nothing: it
// was not looked at. It returns how many it marked.
func (t *Tx) ResolveSince(ctx context.Context) (int64, error) {
	n, err := t.q.ResolveSince(ctx, t.reviewID)
	if err != nil {
		return 0, fmt.Errorf("resolve the findings this review no longer raises: %w", err)
	}
	return n, nil
}

// ResolvedBy lists the findings of earlier reviews that a review resolved
// (see ResolveSince), by ID.
func (s *Store) ResolvedBy(ctx context.Context, reviewID string) ([]review.Finding, error) {
	rows, err := s.q.ResolvedFindings(ctx, reviewID)
	if err != nil {
		return nil, fmt.Errorf("findings resolved by %s: %w", reviewID, err)
	}
	return findingsFromRows(rows), nil
}
