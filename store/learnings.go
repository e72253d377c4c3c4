package store

import (
	"context"
	"fmt"
	"time"
)

// Learning is what the fleet learned from the dismissals of one finding
// (a fingerprint) in a repository: it is not posted there again while its
// code reads the same (CodeHashes), and findings of its kind (KindKey)
// get a lower confidence. A disabled learning does neither.
type Learning struct {
	Repository
	Fingerprint string
	KindKey     string
	CodeHashes  []string
	RiskType    string
	File        string
	Claim       string
	Dismissals  int
	LastAt      time.Time
	Disabled    bool
	Note        string
	// PostIDs are the posts whose feedback taught it.
	PostIDs []int64
}

// Learnings lists what was learned in the repositories filter matches,
// from the dismissals of people who may write to the repository
// (see MatchRepository; "" for every one), newest first. Disabled ones
// are listed too, marked.
func (s *Store) Learnings(ctx context.Context, filter string) ([]Learning, error) {
	return s.learnings(ctx, filter, Repository{})
}

// learnings lists the learnings matching filter, of repository only when
// it is given (its host, owner and name exactly: a filter the index
// narrows).
func (s *Store) learnings(ctx context.Context, filter string, only Repository) ([]Learning, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT p.host, p.owner, p.repo, p.fingerprint, max(p.kind_key), array_agg(DISTINCT p.code_hash),
		       max(p.risk_type), max(p.file), max(p.claim), count(DISTINCT f.id), max(f.created_at),
		       coalesce(bool_or(ls.disabled), false), coalesce(max(ls.note), ''), array_agg(DISTINCT p.id)
		FROM finding_posts p
		JOIN finding_feedback f ON f.post_id = p.id AND f.signal = 'dismiss' AND f.trusted
		LEFT JOIN learning_switches ls
		       ON ls.host = p.host AND ls.owner = p.owner AND ls.repo = p.repo AND ls.fingerprint = p.fingerprint
		WHERE $1 = '' OR (p.host = $1 AND p.owner = $2 AND p.repo = $3)
		GROUP BY p.host, p.owner, p.repo, p.fingerprint
		ORDER BY max(f.created_at) DESC, p.fingerprint`, only.Host, only.Owner, only.Repo)
	if err != nil {
		return nil, fmt.Errorf("list learnings: %w", translate(err))
	}
	defer rows.Close()
	var out []Learning
	for rows.Next() {
		var l Learning
		if err := rows.Scan(&l.Host, &l.Owner, &l.Repo, &l.Fingerprint, &l.KindKey, &l.CodeHashes, &l.RiskType, &l.File,
			&l.Claim, &l.Dismissals, &l.LastAt, &l.Disabled, &l.Note, &l.PostIDs); err != nil {
			return nil, fmt.Errorf("list learnings: %w", err)
		}
		if MatchRepository(l.Repository, filter) {
			out = append(out, l)
		}
	}
	return out, translate(rows.Err())
}

// LearningsOf lists the learnings of one repository (exact host, owner
// and name), enabled and disabled.
func (s *Store) LearningsOf(ctx context.Context, r Repository) ([]Learning, error) {
	all, err := s.learnings(ctx, "", r)
	if err != nil {
		return nil, fmt.Errorf("learnings of %s: %w", r, err)
	}
	return all, nil
}

// SetLearningDisabled switches a learning off (or on again), with a note
// saying why. It returns ErrNotFound when the repository has no learning
// of that fingerprint.
func (s *Store) SetLearningDisabled(ctx context.Context, r Repository, fingerprint string, disabled bool, note string) error {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM finding_posts p JOIN finding_feedback f ON f.post_id = p.id
		WHERE p.host = $1 AND p.owner = $2 AND p.repo = $3 AND p.fingerprint = $4 AND f.signal = 'dismiss' AND f.trusted`,
		r.Host, r.Owner, r.Repo, fingerprint).Scan(&n); err != nil {
		return fmt.Errorf("find learning %s in %s: %w", fingerprint, r, translate(err))
	}
	if n == 0 {
		return fmt.Errorf("learning %s in %s: %w", fingerprint, r, ErrNotFound)
	}
	_, err := s.pool.Exec(ctx, `
		INSERT INTO learning_switches (host, owner, repo, fingerprint, disabled, note) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (host, owner, repo, fingerprint) DO UPDATE SET disabled = EXCLUDED.disabled, note = EXCLUDED.note,
			changed_at = now()`, r.Host, r.Owner, r.Repo, fingerprint, disabled, note)
	if err != nil {
		return fmt.Errorf("switch learning %s in %s: %w", fingerprint, r, translate(err))
	}
	return nil
}
