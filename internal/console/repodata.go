package console

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// repoData is what the repository page shows.
type repoData struct {
	Repo        string
	Reviews     []reviewRow
	Next        string
	ByRisk      chart
	BySeverity  chart
	PullReqs    []prLatest
	CostByMonth []monthCost
	Bucket      string
}

type prLatest struct {
	ChangeKey string
	Number    int
	URL       string
	Review    reviewRow
}

type monthCost struct {
	Month   time.Time
	Reviews int
	Cost    float64
	Calls   int64
}

// findingCount is reported-stage findings of a day by risk type and severity.
type findingCount struct {
	Day                time.Time
	RiskType, Severity string
	N                  int
}

func (c *Console) loadRepo(ctx context.Context, repo string, before cursor) (repoData, error) {
	d := repoData{Repo: repo}
	var err error
	if before.ID == "" {
		d.Reviews, err = collectReviews(c.opts.DB.Query(ctx, `SELECT `+reviewRowColumns+` FROM reviews r
			WHERE r.repo = $1 ORDER BY r.created_at DESC, r.id DESC LIMIT $2`, repo, pageSize))
	} else {
		d.Reviews, err = collectReviews(c.opts.DB.Query(ctx, `SELECT `+reviewRowColumns+` FROM reviews r
			WHERE r.repo = $1 AND (r.created_at, r.id) < ($2, $3::uuid) ORDER BY r.created_at DESC, r.id DESC LIMIT $4`,
			repo, before.At, before.ID, pageSize))
	}
	if err != nil {
		return d, fmt.Errorf("reviews of %s: %w", repo, err)
	}
	if len(d.Reviews) == pageSize {
		last := d.Reviews[len(d.Reviews)-1]
		d.Next = cursor{At: last.CreatedAt, ID: last.ID}.String()
	}
	// Findings that survived the pipeline (active), by day, risk type
	// and severity: the charts group the days into weeks or months.
	rows, err := c.opts.DB.Query(ctx, `
		SELECT date_trunc('day', r.created_at AT TIME ZONE 'UTC'), f.risk_type, f.severity, count(*)
		FROM reviews r JOIN findings f ON f.review_id = r.id AND f.status = 'active'
		WHERE r.repo = $1 GROUP BY 1, 2, 3`, repo)
	if err != nil {
		return d, fmt.Errorf("findings of %s over time: %w", repo, err)
	}
	var counts []findingCount
	for rows.Next() {
		var fc findingCount
		if err := rows.Scan(&fc.Day, &fc.RiskType, &fc.Severity, &fc.N); err != nil {
			rows.Close()
			return d, fmt.Errorf("findings of %s over time: %w", repo, err)
		}
		counts = append(counts, fc)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return d, fmt.Errorf("findings of %s over time: %w", repo, err)
	}
	d.Bucket, d.ByRisk, d.BySeverity = findingCharts(counts)

	rows, err = c.opts.DB.Query(ctx, `SELECT latest.change_key, coalesce(pr.number, 0), coalesce(pr.host, ''), coalesce(pr.owner, ''),
		coalesce(pr.repo, ''), `+strings.ReplaceAll(reviewRowColumns, "r.", "latest.")+`
		FROM (SELECT DISTINCT ON (r.change_key) r.* FROM reviews r
		      WHERE r.repo = $1 AND r.change_key <> '' ORDER BY r.change_key, r.created_at DESC) latest
		LEFT JOIN review_pull_requests pr ON pr.review_id = latest.id
		ORDER BY latest.created_at DESC LIMIT 200`, repo)
	if err != nil {
		return d, fmt.Errorf("pull requests of %s: %w", repo, err)
	}
	for rows.Next() {
		var p prLatest
		var host, owner, name string
		v := &p.Review
		if err := rows.Scan(&p.ChangeKey, &p.Number, &host, &owner, &name, &v.ID, &v.Repo, &v.Status, &v.Stage, &v.Kind, &v.BatchID,
			&v.BaseRef, &v.HeadRef, &v.BaseSHA, &v.HeadSHA, &v.Error, &v.Incomplete, &v.FailedItems, &v.LLMCalls,
			&v.TokensIn, &v.TokensOut, &v.Cost, &v.CreatedAt, &v.StartedAt, &v.FinishedAt, &v.Reported); err != nil {
			rows.Close()
			return d, fmt.Errorf("pull requests of %s: %w", repo, err)
		}
		if p.Number > 0 {
			p.URL = pullRequest{Host: host, Owner: owner, Repo: name, Number: p.Number}.URL()
		}
		d.PullReqs = append(d.PullReqs, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return d, fmt.Errorf("pull requests of %s: %w", repo, err)
	}

	rows, err = c.opts.DB.Query(ctx, `
		SELECT date_trunc('month', created_at AT TIME ZONE 'UTC'), count(*), coalesce(sum(cost), 0), coalesce(sum(llm_calls), 0)
		FROM reviews WHERE repo = $1 GROUP BY 1 ORDER BY 1 DESC LIMIT 36`, repo)
	if err != nil {
		return d, fmt.Errorf("cost of %s: %w", repo, err)
	}
	defer rows.Close()
	for rows.Next() {
		var m monthCost
		if err := rows.Scan(&m.Month, &m.Reviews, &m.Cost, &m.Calls); err != nil {
			return d, fmt.Errorf("cost of %s: %w", repo, err)
		}
		d.CostByMonth = append(d.CostByMonth, m)
	}
	return d, rows.Err()
}

// searchHit is one result of a search.
type searchHit struct {
	Kind      string // repo, pr, finding
	Repo      string
	ReviewID  string
	Count     int
	Last      time.Time
	PR        string
	FindingID int64
	File      string
	Line      int
	Severity  string
	RiskType  string
	Text      string
	Status    string
}

const searchLimit = 50

// likePrefix escapes LIKE's wildcards in s.
func likePrefix(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

func (c *Console) search(ctx context.Context, in, q string) ([]searchHit, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return nil, nil
	}
	if len(q) > 200 {
		q = q[:200]
	}
	var out []searchHit
	switch in {
	case "repo":
		rows, err := c.opts.DB.Query(ctx, `SELECT repo, count(*), max(created_at) FROM reviews
			WHERE repo ILIKE '%' || $1 || '%' GROUP BY repo ORDER BY max(created_at) DESC LIMIT $2`, likePrefix(q), searchLimit)
		if err != nil {
			return nil, fmt.Errorf("search repositories: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			h := searchHit{Kind: "repo"}
			if err := rows.Scan(&h.Repo, &h.Count, &h.Last); err != nil {
				return nil, fmt.Errorf("search repositories: %w", err)
			}
			out = append(out, h)
		}
		return out, rows.Err()
	case "pr":
		num, name := prQuery(q)
		rows, err := c.opts.DB.Query(ctx, `SELECT r.repo, r.id::text, pr.owner || '/' || pr.repo || '#' || pr.number, r.created_at, r.status
			FROM review_pull_requests pr JOIN reviews r ON r.id = pr.review_id
			WHERE ($1 = 0 OR pr.number = $1) AND ($2 = '' OR (pr.owner || '/' || pr.repo) ILIKE '%' || $2 || '%')
			ORDER BY r.created_at DESC LIMIT $3`, num, likePrefix(name), searchLimit)
		if err != nil {
			return nil, fmt.Errorf("search pull requests: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			h := searchHit{Kind: "pr"}
			if err := rows.Scan(&h.Repo, &h.ReviewID, &h.PR, &h.Last, &h.Status); err != nil {
				return nil, fmt.Errorf("search pull requests: %w", err)
			}
			out = append(out, h)
		}
		return out, rows.Err()
	case "file":
		return c.searchFindings(ctx, `f.file LIKE $1 || '%'`, likePrefix(q), 0, 0)
	case "text":
		// Newest findings first, in growing windows of ids: a common word
		// is found among the newest rows without visiting every match in
		// the table, a rare one after a few more index scans.
		var top int64
		if err := c.opts.DB.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM findings`).Scan(&top); err != nil {
			return nil, fmt.Errorf("search findings: %w", err)
		}
		cond := `to_tsvector('simple', f.description) @@ plainto_tsquery('simple', $1)`
		hi := top + 1
		for width := int64(20000); hi > 0 && len(out) < searchLimit; width *= 8 {
			lo := max(hi-width, 0)
			hits, err := c.searchFindings(ctx, cond, q, lo, hi)
			if err != nil {
				return nil, err
			}
			out = append(out, hits[:min(len(hits), searchLimit-len(out))]...)
			hi = lo
		}
		return out, nil
	}
	return nil, fmt.Errorf("search in %q: want repo, pr, file or text", in)
}

// searchFindings lists the newest findings matching cond (on $1), with
// ids in [lo, hi) when hi > 0.
func (c *Console) searchFindings(ctx context.Context, cond, arg string, lo, hi int64) ([]searchHit, error) {
	rows, err := c.opts.DB.Query(ctx, `SELECT r.repo, r.id::text, f.id, f.file, f.line_start, f.severity, f.risk_type,
		left(f.description, 300), f.status, r.created_at
		FROM findings f JOIN reviews r ON r.id = f.review_id
		WHERE `+cond+` AND ($3 = 0 OR (f.id >= $2 AND f.id < $3)) ORDER BY f.id DESC LIMIT $4`, arg, lo, hi, searchLimit)
	if err != nil {
		return nil, fmt.Errorf("search findings: %w", err)
	}
	defer rows.Close()
	var out []searchHit
	for rows.Next() {
		h := searchHit{Kind: "finding"}
		if err := rows.Scan(&h.Repo, &h.ReviewID, &h.FindingID, &h.File, &h.Line, &h.Severity, &h.RiskType, &h.Text, &h.Status, &h.Last); err != nil {
			return nil, fmt.Errorf("search findings: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// prQuery reads "42", "#42", "org/app#42" or "org/app".
func prQuery(q string) (int, string) {
	name, num, found := strings.Cut(q, "#")
	if !found {
		if n, err := strconv.Atoi(q); err == nil {
			return n, ""
		}
		return 0, q
	}
	n, _ := strconv.Atoi(num)
	return n, strings.TrimSpace(name)
}
