package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// outcomesQuery runs a query over finding_outcomes in a read-only
// transaction without JIT compilation: the view's per-post subqueries make
// the planner's estimates large enough to compile, and compiling cost
// more than the query itself (100,000 posts: about 2 s of 3.7 s).
func (s *Store) outcomesQuery(ctx context.Context, what string, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("%s: %w", what, translate(err))
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `SET LOCAL jit = off`); err != nil {
		return fmt.Errorf("%s: %w", what, translate(err))
	}
	if err := fn(tx); err != nil {
		return fmt.Errorf("%s: %w", what, translate(err))
	}
	return nil
}

// QualityRow counts the outcomes of the findings posted on one repository
// for one risk type (RiskType "" is the repository's total).
type QualityRow struct {
	Repo         string `json:"repo"` // HOST/OWNER/REPO
	RiskType     string `json:"risk_type"`
	Posted       int    `json:"posted"`
	Resolved     int    `json:"resolved"`
	Dismissed    int    `json:"dismissed"`
	Acknowledged int    `json:"acknowledged"`
	Open         int    `json:"open"`
	// OnMerged counts the findings whose pull request was merged: the
	// resolution rate's denominator.
	OnMerged int `json:"on_merged"`
}

// ResolutionRate is Resolved / OnMerged (0 when nothing merged).
func (q QualityRow) ResolutionRate() float64 {
	if q.OnMerged == 0 {
		return 0
	}
	return float64(q.Resolved) / float64(q.OnMerged)
}

// DismissalRate is Dismissed / Posted (0 when nothing was posted).
func (q QualityRow) DismissalRate() float64 {
	if q.Posted == 0 {
		return 0
	}
	return float64(q.Dismissed) / float64(q.Posted)
}

// Quality counts the outcomes of findings posted since the given time on
// the repositories filter matches (see MatchRepository), per repository
// and risk type, each repository followed by its total (RiskType "").
func (s *Store) Quality(ctx context.Context, filter string, since time.Time) ([]QualityRow, error) {
	var out []QualityRow
	err := s.outcomesQuery(ctx, "count finding outcomes", func(tx pgx.Tx) error {
		var err error
		out, err = quality(ctx, tx, filter, since)
		return err
	})
	return out, err
}

func quality(ctx context.Context, tx pgx.Tx, filter string, since time.Time) ([]QualityRow, error) {
	// The filter narrows the scan too: OWNER/REPO, or HOST/OWNER/REPO.
	host, name := "", strings.ToLower(strings.Trim(strings.TrimSpace(filter), "/"))
	if strings.Count(name, "/") == 2 {
		host, name, _ = strings.Cut(name, "/")
	}
	rows, err := tx.Query(ctx, `
		SELECT host, split_part(repo, '/', 1), split_part(repo, '/', 2), coalesce(risk_type, ''),
		       count(*),
		       count(*) FILTER (WHERE outcome = 'resolved'),
		       count(*) FILTER (WHERE outcome = 'dismissed'),
		       count(*) FILTER (WHERE outcome = 'acknowledged'),
		       count(*) FILTER (WHERE outcome = 'open'),
		       count(*) FILTER (WHERE pr_state = 'merged')
		FROM finding_outcomes
		WHERE posted_at >= $1 AND ($2 = '' OR lower(repo) = $2) AND ($3 = '' OR lower(host) = $3)
		GROUP BY GROUPING SETS ((host, repo, risk_type), (host, repo))
		ORDER BY host, repo, risk_type NULLS LAST`, since, name, host)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []QualityRow
	for rows.Next() {
		var r Repository
		var q QualityRow
		if err := rows.Scan(&r.Host, &r.Owner, &r.Repo, &q.RiskType, &q.Posted, &q.Resolved, &q.Dismissed, &q.Acknowledged,
			&q.Open, &q.OnMerged); err != nil {
			return nil, err
		}
		if MatchRepository(r, filter) {
			q.Repo = r.String()
			out = append(out, q)
		}
	}
	return out, rows.Err()
}

// OutcomeCounts counts posted findings by outcome (the metric).
func (s *Store) OutcomeCounts(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{"resolved": 0, "dismissed": 0, "acknowledged": 0, "open": 0}
	err := s.outcomesQuery(ctx, "count finding outcomes", func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT outcome, count(*) FROM finding_outcomes GROUP BY outcome`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var o string
			var n int64
			if err := rows.Scan(&o, &n); err != nil {
				return err
			}
			out[o] = n
		}
		return rows.Err()
	})
	return out, err
}

// Calibration is what a repository's outcomes say about one risk type:
// how many of its posted findings people dismissed and how many were
// resolved, of those decided (dismissed, or on a merged pull request).
type Calibration struct {
	RiskType            string
	Decided             int
	Resolved, Dismissed int
}

// CalibrationOf counts the decided findings of a repository per risk type.
func (s *Store) CalibrationOf(ctx context.Context, r Repository) (map[string]Calibration, error) {
	out := map[string]Calibration{}
	err := s.outcomesQuery(ctx, "outcomes of "+r.String(), func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT risk_type,
			       count(*) FILTER (WHERE outcome = 'dismissed' OR pr_state = 'merged'),
			       count(*) FILTER (WHERE outcome = 'resolved'),
			       count(*) FILTER (WHERE outcome = 'dismissed')
			FROM finding_outcomes WHERE host = $1 AND repo = $2 GROUP BY risk_type`, r.Host, r.Owner+"/"+r.Repo)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c Calibration
			if err := rows.Scan(&c.RiskType, &c.Decided, &c.Resolved, &c.Dismissed); err != nil {
				return err
			}
			out[c.RiskType] = c
		}
		return rows.Err()
	})
	return out, err
}

// OutcomesOf returns the outcome of each finding posted on a pull
// request, by fingerprint (view finding_outcomes).
func (s *Store) OutcomesOf(ctx context.Context, pr PullRequestRef) (map[string]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT fingerprint, outcome FROM finding_outcomes
		WHERE host = $1 AND repo = $2 AND number = $3`, pr.Host, pr.Owner+"/"+pr.Repo, pr.Number)
	if err != nil {
		return nil, fmt.Errorf("outcomes of %s#%d: %w", pr.Repository, pr.Number, translate(err))
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var fp, o string
		if err := rows.Scan(&fp, &o); err != nil {
			return nil, fmt.Errorf("outcomes of %s#%d: %w", pr.Repository, pr.Number, err)
		}
		out[fp] = o
	}
	return out, translate(rows.Err())
}
