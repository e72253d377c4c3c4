package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

func saveIncremental(ctx context.Context, tx pgx.Tx, id string, inc review.Incremental) error {
	var since any
	if inc.Since != "" {
		since = inc.Since
	}
	if _, err := tx.Exec(ctx, `UPDATE reviews SET since_review = $2, change_key = $3 WHERE id = $1`,
		id, since, inc.ChangeKey); err != nil {
		return fmt.Errorf("link review to %s: %w", inc.Since, err)
	}
	carried := map[string]bool{}
	for _, p := range inc.Carried {
		carried[p] = true
	}
	rows := make([][]any, 0, len(inc.FileKeys))
	for path, key := range inc.FileKeys {
		rows = append(rows, []any{id, path, key, carried[path]})
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"file_results"}, []string{"review_id", "path", "key", "carried"},
		pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("store file result keys: %w", err)
	}
	if inc.Since == "" || len(inc.Carried) == 0 {
		return nil
	}
	return carryFindings(ctx, tx, id, inc.Since, inc.Carried)
}

// carryFindings copies the active and dropped findings of the given files
// from review `from` into review `to`, with their verdicts and expert
// runs, each copy naming its original in carried_from. Merged findings are
// not copied: the finding they were folded into is.
func carryFindings(ctx context.Context, tx pgx.Tx, to, from string, paths []string) error {
	if _, err := tx.Exec(ctx, `
		INSERT INTO findings (review_id, origin, ordinal, risk_type, file, line_start, line_end, description,
		                      suggestion, severity, confidence_initial, confidence, status, drop_reason, score,
		                      quote, fix_diff, fingerprint, carried_from)
		SELECT $1, 'carried', row_number() OVER (ORDER BY id), risk_type, file, line_start, line_end, description,
		       suggestion, severity, confidence_initial, confidence, status, drop_reason, score,
		       quote, fix_diff, fingerprint, id
		FROM findings
		WHERE review_id = $2 AND file = ANY($3) AND status IN ('active', 'dropped')`, to, from, paths); err != nil {
		return fmt.Errorf("carry findings from %s: %w", from, err)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO verdicts (review_id, finding_id, stage, verdict, confidence_before, confidence_after,
		                      reason, evidence, model, tokens_in, tokens_out, latency_ms)
		SELECT $1, n.id, v.stage, v.verdict, v.confidence_before, v.confidence_after,
		       v.reason, v.evidence, v.model, 0, 0, 0
		FROM findings n JOIN verdicts v ON v.finding_id = n.carried_from
		WHERE n.review_id = $1`, to); err != nil {
		return fmt.Errorf("carry verdicts from %s: %w", from, err)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO expert_runs (review_id, finding_id, stop_reason, rounds, tool_calls, phases, checks, error, tool_outcomes)
		SELECT $1, n.id, e.stop_reason, e.rounds, e.tool_calls, e.phases, e.checks, e.error, e.tool_outcomes
		FROM findings n JOIN expert_runs e ON e.finding_id = n.carried_from
		WHERE n.review_id = $1`, to); err != nil {
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
	var id string
	err := s.pool.QueryRow(ctx, `
		SELECT id::text FROM reviews
		WHERE repo = $1 AND change_key = $2 AND status = 'done' AND NOT incomplete
		ORDER BY created_at DESC LIMIT 1`, repo, changeKey).Scan(&id)
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
	rows, err := s.pool.Query(ctx, `SELECT path, key FROM file_results WHERE review_id = $1`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("file result keys of %s: %w", reviewID, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var p, k string
		if err := rows.Scan(&p, &k); err != nil {
			return nil, fmt.Errorf("file result keys of %s: %w", reviewID, err)
		}
		out[p] = k
	}
	return out, rows.Err()
}

// SinceReview returns the review a review was made incrementally against
// ("" when none).
func (s *Store) SinceReview(ctx context.Context, reviewID string) (string, error) {
	var since string
	err := s.pool.QueryRow(ctx, `SELECT coalesce(since_review::text, '') FROM reviews WHERE id = $1`, reviewID).Scan(&since)
	if err != nil {
		return "", fmt.Errorf("since review of %s: %w", reviewID, translate(err))
	}
	return since, nil
}

// ResolveSince marks resolved (resolved_in = this review) the findings the
// earlier review this one builds on reported (active ones: not dropped or
// merged) that sit on files this review did not carry — it re-reviewed
// them, or they left the change — and whose fingerprint no finding
// reviewed here has. A file still in the change but skipped now (ignored
// by the repository configuration, grown too large) resolves nothing: it
// was not looked at. It returns how many it marked.
func (t *Tx) ResolveSince(ctx context.Context) (int64, error) {
	// The rows are locked in id order first (lockorder.go): two reviews
	// built on the same earlier one resolve overlapping findings.
	tag, err := t.tx.Exec(ctx, `
		WITH target AS (
		SELECT old.id FROM findings old
		JOIN reviews r ON r.id = $1
		WHERE old.review_id = r.since_review
		  AND old.resolved_in IS NULL
		  AND old.status = 'active'
		  AND NOT EXISTS (SELECT 1 FROM review_files rf
		                  WHERE rf.review_id = r.id AND rf.path = old.file AND rf.skip_reason <> '')
		  AND NOT EXISTS (SELECT 1 FROM file_results fr
		                  WHERE fr.review_id = r.id AND fr.path = old.file AND fr.carried)
		  AND NOT EXISTS (SELECT 1 FROM findings n
		                  WHERE n.review_id = r.id AND n.carried_from IS NULL
		                    AND n.fingerprint <> '' AND n.fingerprint = old.fingerprint)
		ORDER BY old.id FOR UPDATE OF old)
		UPDATE findings f SET resolved_in = $1
		FROM target t WHERE f.id = t.id AND f.resolved_in IS NULL`, t.reviewID)
	if err != nil {
		return 0, fmt.Errorf("resolve the findings this review no longer raises: %w", err)
	}
	return tag.RowsAffected(), nil
}

// ResolvedBy lists the findings of earlier reviews that a review resolved
// (see ResolveSince), by ID.
func (s *Store) ResolvedBy(ctx context.Context, reviewID string) ([]review.Finding, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+findingColumns+` FROM findings WHERE resolved_in = $1 ORDER BY id`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("findings resolved by %s: %w", reviewID, err)
	}
	defer rows.Close()
	var out []review.Finding
	for rows.Next() {
		f, err := scanFinding(rows)
		if err != nil {
			return nil, fmt.Errorf("findings resolved by %s: %w", reviewID, err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}
