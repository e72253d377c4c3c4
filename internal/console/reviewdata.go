package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
)

var errNotFound = errors.New("not found")

// reviewDetail is everything the review page shows.
type reviewDetail struct {
	reviewRow
	Source, Purpose, IntentMode string
	SkippedStages               []string
	SnapshotFallback            string
	PR                          *pullRequest
	Stages                      []stageTiming
	Calls                       []stageCalls
	Reported, Below, Dropped    []finding
	FailedItems                 []failedItem
	HasReport                   bool
	Threshold                   float64
}

type pullRequest struct {
	Host, Owner, Repo string
	Number            int
}

// URL is the pull request's page.
func (p pullRequest) URL() string {
	return fmt.Sprintf("https://%s/%s/%s/pull/%d", p.Host, p.Owner, p.Repo, p.Number)
}

type stageTiming struct {
	Stage                       string
	Items, Done, Failed, Budget int
	Pending                     int
	Started, Finished           *time.Time
	AvgMS, MaxMS                int64
}

// Wall is the time from the stage's first item starting to its last ending.
func (s stageTiming) Wall() time.Duration {
	if s.Started == nil || s.Finished == nil {
		return 0
	}
	return s.Finished.Sub(*s.Started)
}

type stageCalls struct {
	Stage               string
	Calls, RateLimited  int
	Errors              int
	TokensIn, TokensOut int64
	Cost                float64
	LatencyMS           int64
}

type finding struct {
	ID                 int64
	RiskType, Severity string
	File               string
	LineStart, LineEnd int
	Description        string
	Suggestion         string
	Status, DropReason string
	MergedInto         *int64
	CarriedFrom        *int64
	ConfidenceInitial  float64
	Confidence         float64
	Quote, FixDiff     string
	Excerpt            []excerptLine
	Trail              []verdict
	Expert             *expertRun
	Why                *belowReason
}

type excerptLine struct {
	N    int
	Text string
	Hit  bool // within the finding's lines
}

type verdict struct {
	Stage, Verdict                    string
	ConfidenceBefore, ConfidenceAfter float64
	Reason                            string
	Evidence                          []string
	Model                             string
	TokensIn, TokensOut, LatencyMS    int
}

type expertRun struct {
	StopReason string
	Rounds     int
	DurationMS int
	Error      string
	Calls      []toolCall
}

type toolCall struct {
	Round, Seq          int
	Tool, Args, Outcome string
	ResultBytes         int
	LatencyMS           int
}

type failedItem struct {
	Stage, Key, Status, Error string
	Attempts                  int
}

// maxFindings bounds a review page: a review keeps at most a few hundred
// findings after the manager's cap; more are summarised, not listed.
const maxFindings = 1000

func (c *Console) loadReview(ctx context.Context, id string) (reviewDetail, error) {
	var d reviewDetail
	row := c.opts.DB.QueryRow(ctx, `SELECT `+reviewRowColumns+`, r.source, r.purpose, r.intent_mode, r.skipped_stages,
		r.snapshot_fallback, EXISTS (SELECT 1 FROM reports p WHERE p.review_id = r.id)
		FROM reviews r WHERE r.id = $1::uuid`, id)
	v := &d.reviewRow
	err := row.Scan(&v.ID, &v.Repo, &v.Status, &v.Stage, &v.Kind, &v.BatchID, &v.BaseRef, &v.HeadRef, &v.BaseSHA,
		&v.HeadSHA, &v.Error, &v.Incomplete, &v.FailedItems, &v.LLMCalls, &v.TokensIn, &v.TokensOut, &v.Cost,
		&v.CreatedAt, &v.StartedAt, &v.FinishedAt, &v.Reported, &d.Source, &d.Purpose, &d.IntentMode, &d.SkippedStages,
		&d.SnapshotFallback, &d.HasReport)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, errNotFound
	}
	if err != nil {
		return d, fmt.Errorf("load review %s: %w", id, err)
	}
	steps := []func(context.Context, *reviewDetail) error{c.loadPR, c.loadStages, c.loadCalls, c.loadFindings, c.loadFailedItems}
	for _, step := range steps {
		if err := step(ctx, &d); err != nil {
			return d, fmt.Errorf("load review %s: %w", id, err)
		}
	}
	return d, nil
}

func (c *Console) loadPR(ctx context.Context, d *reviewDetail) error {
	var p pullRequest
	err := c.opts.DB.QueryRow(ctx, `SELECT host, owner, repo, number FROM review_pull_requests WHERE review_id = $1::uuid`, d.ID).
		Scan(&p.Host, &p.Owner, &p.Repo, &p.Number)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pull request: %w", err)
	}
	d.PR = &p
	return nil
}

func (c *Console) loadStages(ctx context.Context, d *reviewDetail) error {
	rows, err := c.opts.DB.Query(ctx, `
		SELECT stage, count(*), count(*) FILTER (WHERE status = 'done'), count(*) FILTER (WHERE status = 'failed'),
		       count(*) FILTER (WHERE status = 'skipped_budget'), count(*) FILTER (WHERE status = 'pending'),
		       min(started_at), max(finished_at),
		       coalesce((extract(epoch FROM avg(finished_at - started_at)) * 1000)::bigint, 0),
		       coalesce((extract(epoch FROM max(finished_at - started_at)) * 1000)::bigint, 0)
		FROM stage_items WHERE review_id = $1::uuid GROUP BY stage ORDER BY min(created_at), stage`, d.ID)
	if err != nil {
		return fmt.Errorf("stage timings: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s stageTiming
		if err := rows.Scan(&s.Stage, &s.Items, &s.Done, &s.Failed, &s.Budget, &s.Pending, &s.Started, &s.Finished, &s.AvgMS, &s.MaxMS); err != nil {
			return fmt.Errorf("stage timings: %w", err)
		}
		d.Stages = append(d.Stages, s)
	}
	return rows.Err()
}

func (c *Console) loadCalls(ctx context.Context, d *reviewDetail) error {
	rows, err := c.opts.DB.Query(ctx, `
		SELECT stage, count(*), count(*) FILTER (WHERE status = 'rate_limited'),
		       count(*) FILTER (WHERE status NOT IN ('ok', 'rate_limited', 'started')),
		       coalesce(sum(tokens_in), 0), coalesce(sum(tokens_out), 0), coalesce(sum(cost), 0), coalesce(sum(latency_ms), 0)
		FROM llm_calls WHERE review_id = $1::uuid GROUP BY stage ORDER BY min(id)`, d.ID)
	if err != nil {
		return fmt.Errorf("model calls: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s stageCalls
		if err := rows.Scan(&s.Stage, &s.Calls, &s.RateLimited, &s.Errors, &s.TokensIn, &s.TokensOut, &s.Cost, &s.LatencyMS); err != nil {
			return fmt.Errorf("model calls: %w", err)
		}
		d.Calls = append(d.Calls, s)
	}
	return rows.Err()
}

var severityRank = map[string]int{"critical": 0, "high": 1, "medium": 2, "low": 3, "info": 4}

func (c *Console) loadFindings(ctx context.Context, d *reviewDetail) error {
	rows, err := c.opts.DB.Query(ctx, `
		SELECT id, risk_type, severity, file, line_start, line_end, description, suggestion, status, drop_reason,
		       merged_into, carried_from, confidence_initial, confidence, quote, fix_diff
		FROM findings WHERE review_id = $1::uuid ORDER BY id LIMIT $2`, d.ID, maxFindings)
	if err != nil {
		return fmt.Errorf("findings: %w", err)
	}
	var all []finding
	byID := map[int64]int{}
	for rows.Next() {
		var f finding
		if err := rows.Scan(&f.ID, &f.RiskType, &f.Severity, &f.File, &f.LineStart, &f.LineEnd, &f.Description, &f.Suggestion,
			&f.Status, &f.DropReason, &f.MergedInto, &f.CarriedFrom, &f.ConfidenceInitial, &f.Confidence, &f.Quote, &f.FixDiff); err != nil {
			rows.Close()
			return fmt.Errorf("findings: %w", err)
		}
		byID[f.ID] = len(all)
		all = append(all, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("findings: %w", err)
	}
	if err := c.loadTrails(ctx, d.ID, all, byID); err != nil {
		return err
	}
	if err := c.loadExcerpts(ctx, d.ID, all, byID); err != nil {
		return err
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if severityRank[a.Severity] != severityRank[b.Severity] {
			return severityRank[a.Severity] < severityRank[b.Severity]
		}
		if a.File != b.File {
			return a.File < b.File
		}
		return a.LineStart < b.LineStart
	})
	sel, err := c.reportSelection(ctx, d.ID)
	if err != nil {
		return err
	}
	d.Threshold = sel.Threshold
	for _, f := range all {
		_, reported := sel.Reported[f.ID]
		why, below := sel.Below[f.ID]
		switch {
		case reported || (f.Status == "active" && !d.HasReport):
			d.Reported = append(d.Reported, f)
		case below:
			f.Why = why
			d.Below = append(d.Below, f)
		case f.Status == "active":
			// Active but in neither list: the report judged its place
			// out of the file's range.
			f.DropReason = "not in the report (its lines are not in the head file)"
			d.Dropped = append(d.Dropped, f)
		default:
			d.Dropped = append(d.Dropped, f)
		}
	}
	return nil
}

// selection is how the stored report divided a review's active findings.
type selection struct {
	Threshold float64
	Reported  map[int64]struct{}
	Below     map[int64]*belowReason
}

type belowReason struct {
	Stage     string  `json:"stage"`
	Kind      string  `json:"kind"`
	Threshold float64 `json:"threshold"`
	Detail    string  `json:"detail"`
}

// reportSelection reads which findings the stored report reports and
// which it keeps below the threshold (and why), without loading the
// whole document into Go.
func (c *Console) reportSelection(ctx context.Context, id string) (selection, error) {
	sel := selection{Reported: map[int64]struct{}{}, Below: map[int64]*belowReason{}}
	var reported, below string
	err := c.opts.DB.QueryRow(ctx, `
		SELECT coalesce((p.json->>'threshold')::float8, 0),
		       coalesce((SELECT json_agg(f->'id') FROM json_array_elements(p.json->'findings') f)::text, '[]'),
		       coalesce((SELECT json_object_agg(f->>'id', f->'below_threshold_reason')
		                 FROM json_array_elements(p.json->'below_threshold') f)::text, '{}')
		FROM reports p WHERE p.review_id = $1::uuid`, id).Scan(&sel.Threshold, &reported, &below)
	if errors.Is(err, pgx.ErrNoRows) {
		return sel, nil
	}
	if err != nil {
		return sel, fmt.Errorf("report selection: %w", err)
	}
	var ids []int64
	if err := json.Unmarshal([]byte(reported), &ids); err != nil {
		return sel, fmt.Errorf("report selection: %w", err)
	}
	for _, id := range ids {
		sel.Reported[id] = struct{}{}
	}
	var why map[string]*belowReason
	if err := json.Unmarshal([]byte(below), &why); err != nil {
		return sel, fmt.Errorf("report selection: %w", err)
	}
	for k, v := range why {
		var n int64
		if _, err := fmt.Sscan(k, &n); err == nil {
			sel.Below[n] = v
		}
	}
	return sel, nil
}

func (c *Console) loadTrails(ctx context.Context, reviewID string, all []finding, byID map[int64]int) error {
	rows, err := c.opts.DB.Query(ctx, `
		SELECT finding_id, stage, verdict, confidence_before, confidence_after, reason, evidence::text, model,
		       tokens_in, tokens_out, latency_ms
		FROM verdicts WHERE review_id = $1::uuid ORDER BY finding_id, id`, reviewID)
	if err != nil {
		return fmt.Errorf("verdicts: %w", err)
	}
	for rows.Next() {
		var fid int64
		var v verdict
		var ev string
		if err := rows.Scan(&fid, &v.Stage, &v.Verdict, &v.ConfidenceBefore, &v.ConfidenceAfter, &v.Reason, &ev, &v.Model,
			&v.TokensIn, &v.TokensOut, &v.LatencyMS); err != nil {
			rows.Close()
			return fmt.Errorf("verdicts: %w", err)
		}
		v.Evidence = evidenceLines(ev)
		if i, ok := byID[fid]; ok {
			all[i].Trail = append(all[i].Trail, v)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("verdicts: %w", err)
	}
	for i := range all {
		sort.SliceStable(all[i].Trail, func(a, b int) bool { return stageOrder(all[i].Trail[a].Stage) < stageOrder(all[i].Trail[b].Stage) })
	}
	rows, err = c.opts.DB.Query(ctx, `
		SELECT finding_id, stop_reason, rounds, duration_ms, error FROM expert_runs WHERE review_id = $1::uuid`, reviewID)
	if err != nil {
		return fmt.Errorf("expert runs: %w", err)
	}
	for rows.Next() {
		var fid int64
		var e expertRun
		if err := rows.Scan(&fid, &e.StopReason, &e.Rounds, &e.DurationMS, &e.Error); err != nil {
			rows.Close()
			return fmt.Errorf("expert runs: %w", err)
		}
		if i, ok := byID[fid]; ok {
			all[i].Expert = &e
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("expert runs: %w", err)
	}
	rows, err = c.opts.DB.Query(ctx, `
		SELECT finding_id, round, seq, tool, args, outcome, result_bytes, latency_ms
		FROM expert_tool_calls WHERE review_id = $1::uuid ORDER BY finding_id, seq`, reviewID)
	if err != nil {
		return fmt.Errorf("expert tool calls: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var fid int64
		var t toolCall
		if err := rows.Scan(&fid, &t.Round, &t.Seq, &t.Tool, &t.Args, &t.Outcome, &t.ResultBytes, &t.LatencyMS); err != nil {
			return fmt.Errorf("expert tool calls: %w", err)
		}
		if i, ok := byID[fid]; ok && all[i].Expert != nil {
			all[i].Expert.Calls = append(all[i].Expert.Calls, t)
		}
	}
	return rows.Err()
}

func stageOrder(s string) int {
	switch s {
	case "verify":
		return 0
	case "expert":
		return 1
	case "eval":
		return 2
	}
	return 3
}

// evidenceLines turns a verdict's evidence (JSON) into lines of text.
func evidenceLines(raw string) []string {
	var items []any
	if err := json.Unmarshal([]byte(raw), &items); err != nil {
		var one any
		if json.Unmarshal([]byte(raw), &one) != nil || one == nil {
			return nil
		}
		items = []any{one}
	}
	var out []string
	for _, it := range items {
		switch v := it.(type) {
		case string:
			out = append(out, v)
		default:
			b, _ := json.Marshal(v)
			out = append(out, string(b))
		}
	}
	return out
}

// excerptContext is how many lines around a finding its excerpt shows;
// maxExcerpt caps the lines of one excerpt.
const (
	excerptContext = 3
	maxExcerpt     = 40
)

// loadExcerpts cuts the lines of each reported finding out of its file's
// stored head content, in the database.
func (c *Console) loadExcerpts(ctx context.Context, reviewID string, all []finding, byID map[int64]int) error {
	rows, err := c.opts.DB.Query(ctx, `
		SELECT f.id, greatest(f.line_start - $2, 1),
		       (string_to_array(rf.content, E'\n'))[greatest(f.line_start - $2, 1):least(f.line_end + $2, f.line_start + $3)]
		FROM findings f JOIN review_files rf ON rf.review_id = f.review_id AND rf.path = f.file
		WHERE f.review_id = $1::uuid AND f.status = 'active' AND rf.content IS NOT NULL AND f.line_start > 0`,
		reviewID, excerptContext, maxExcerpt)
	if err != nil {
		return fmt.Errorf("code excerpts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var fid int64
		var first int
		var lines []string
		if err := rows.Scan(&fid, &first, &lines); err != nil {
			return fmt.Errorf("code excerpts: %w", err)
		}
		i, ok := byID[fid]
		if !ok {
			continue
		}
		f := &all[i]
		for k, text := range lines {
			n := first + k
			f.Excerpt = append(f.Excerpt, excerptLine{N: n, Text: text, Hit: n >= f.LineStart && n <= f.LineEnd})
		}
	}
	return rows.Err()
}

func (c *Console) loadFailedItems(ctx context.Context, d *reviewDetail) error {
	rows, err := c.opts.DB.Query(ctx, `
		SELECT stage, item_key, status, error, attempts FROM stage_items
		WHERE review_id = $1::uuid AND status IN ('failed', 'skipped_budget') ORDER BY stage, item_key LIMIT 500`, d.ID)
	if err != nil {
		return fmt.Errorf("failed items: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var f failedItem
		if err := rows.Scan(&f.Stage, &f.Key, &f.Status, &f.Error, &f.Attempts); err != nil {
			return fmt.Errorf("failed items: %w", err)
		}
		d.FailedItems = append(d.FailedItems, f)
	}
	return rows.Err()
}

// report returns a stored report document.
func (c *Console) report(ctx context.Context, id, format string) ([]byte, error) {
	col := map[string]string{"md": "markdown", "json": "json::text", "sarif": "sarif::text"}[format]
	if col == "" {
		return nil, errNotFound
	}
	var doc string
	err := c.opts.DB.QueryRow(ctx, `SELECT `+col+` FROM reports WHERE review_id = $1::uuid`, id).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("load the %s report of %s: %w", format, id, err)
	}
	return []byte(doc), nil
}
