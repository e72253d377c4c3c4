package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// FinishIntentItem stores the findings one intent item produced and marks
// the item done, in one transaction. A second delivery of the same item
// returns ErrItemClosed and writes nothing.
func (s *Store) FinishIntentItem(ctx context.Context, reviewID, key string, findings []review.Finding) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockPending(ctx, tx, reviewID, review.StageIntent, key); err != nil {
			return err
		}
		for i, f := range findings {
			if _, err := tx.Exec(ctx, `
				INSERT INTO findings (review_id, origin, ordinal, risk_type, file, line_start, line_end,
				                      description, suggestion, severity, confidence_initial, confidence, quote, fix_diff, fingerprint)
				VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$11,$12,$13,$14)
				ON CONFLICT (review_id, origin, ordinal) DO NOTHING`,
				reviewID, key, i, string(f.RiskType), f.File, f.LineStart, f.LineEnd, f.Description,
				f.Suggestion, string(f.Severity), review.ClampConfidence(f.Confidence), f.Quote, f.Fix, f.Fingerprint); err != nil {
				return fmt.Errorf("insert finding %d of %s: %w", i, key, err)
			}
		}
		return closeItem(ctx, tx, reviewID, review.StageIntent, key, review.ItemDone, "")
	})
}

const findingColumns = `id, review_id, risk_type, file, line_start, line_end, description, suggestion,
	severity, confidence, status, drop_reason, coalesce(merged_into, 0), quote, fix_diff,
	fingerprint, coalesce(carried_from, 0), coalesce(resolved_in::text, '')`

func scanFinding(row pgx.Row) (review.Finding, error) {
	var f review.Finding
	var risk, sev, status string
	err := row.Scan(&f.ID, &f.ReviewID, &risk, &f.File, &f.LineStart, &f.LineEnd, &f.Description,
		&f.Suggestion, &sev, &f.Confidence, &status, &f.DropReason, &f.MergedInto, &f.Quote, &f.Fix,
		&f.Fingerprint, &f.CarriedFrom, &f.ResolvedIn)
	f.RiskType, f.Severity, f.Status = review.RiskType(risk), review.Severity(sev), review.FindingStatus(status)
	return f, translate(err)
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func listFindings(ctx context.Context, q querier, reviewID string) ([]review.Finding, error) {
	rows, err := q.Query(ctx, `SELECT `+findingColumns+` FROM findings WHERE review_id = $1 ORDER BY id`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list findings of %s: %w", reviewID, err)
	}
	defer rows.Close()
	var out []review.Finding
	for rows.Next() {
		f, err := scanFinding(rows)
		if err != nil {
			return nil, fmt.Errorf("list findings of %s: %w", reviewID, err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// ListFindings returns every finding of a review (all statuses) by ID.
func (s *Store) ListFindings(ctx context.Context, reviewID string) ([]review.Finding, error) {
	return listFindings(ctx, s.pool, reviewID)
}

// GetFinding loads one finding.
func (s *Store) GetFinding(ctx context.Context, id int64) (review.Finding, error) {
	f, err := scanFinding(s.pool.QueryRow(ctx, `SELECT `+findingColumns+` FROM findings WHERE id = $1`, id))
	if err != nil {
		return review.Finding{}, fmt.Errorf("get finding %d: %w", id, err)
	}
	return f, nil
}

// Verdict is one stage's judgement of one finding.
type Verdict struct {
	ReviewID         string
	FindingID        int64
	Stage            review.Stage
	Verdict          string
	ConfidenceBefore float64
	ConfidenceAfter  float64
	Reason           string
	Evidence         json.RawMessage // JSON array
	Model            string
	TokensIn         int
	TokensOut        int
	Latency          time.Duration
	CreatedAt        time.Time
}

// ExpertRun is the record of one expert agent run.
type ExpertRun struct {
	FindingID  int64
	StopReason string
	Rounds     int
	ToolCalls  json.RawMessage // {"read_file": 3, …}
	Phases     json.RawMessage // [{"from":"explore","to":"verify","round":4,"reason":"…"}]
	Checks     json.RawMessage // accept-gate results
	TokensIn   int
	TokensOut  int
	Duration   time.Duration
	Error      string
	// ToolOutcomes counts the run's tool calls by tool and outcome:
	// {"grep": {"hit": 3, "empty": 1}, …}.
	ToolOutcomes json.RawMessage
	// Calls are the run's repository tool calls, in order; stored with the
	// run, not loaded with it (ListExpertToolCalls).
	Calls []ExpertToolCall
}

// ExpertToolCall is one repository tool call of an expert run and what it
// gave the model.
type ExpertToolCall struct {
	FindingID   int64
	Round, Seq  int
	Tool        string
	Args        string // redacted and bounded by the runtime
	Outcome     string // hit, empty, refused, error, timeout
	ResultBytes int
	Latency     time.Duration
}

func insertVerdict(ctx context.Context, tx pgx.Tx, v Verdict) error {
	ev := v.Evidence
	if ev == nil {
		ev = json.RawMessage(`[]`)
	}
	tag, err := tx.Exec(ctx, `
		INSERT INTO verdicts (review_id, finding_id, stage, verdict, confidence_before, confidence_after,
		                      reason, evidence, model, tokens_in, tokens_out, latency_ms)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)
		ON CONFLICT (finding_id, stage) DO NOTHING`,
		v.ReviewID, v.FindingID, string(v.Stage), v.Verdict, v.ConfidenceBefore, v.ConfidenceAfter,
		v.Reason, ev, v.Model, v.TokensIn, v.TokensOut, v.Latency.Milliseconds())
	if err != nil {
		return fmt.Errorf("insert %s verdict of finding %d: %w", v.Stage, v.FindingID, err)
	}
	if tag.RowsAffected() == 0 {
		return nil // already judged at this stage: keep the first verdict
	}
	if _, err := tx.Exec(ctx, `UPDATE findings SET confidence = $2 WHERE id = $1`,
		v.FindingID, review.ClampConfidence(v.ConfidenceAfter)); err != nil {
		return fmt.Errorf("update confidence of finding %d: %w", v.FindingID, err)
	}
	return nil
}

// FinishVerdictItem stores a verify, expert or eval verdict (and the expert
// run record, when given), moves the finding's confidence, and marks the
// ledger item done — all in one transaction. A "failed" verdict (an expert
// run that timed out or ended on an error: nothing was investigated) is
// kept with its run, and the item is marked failed with the run's error,
// so the review counts it as not reviewed. A duplicate delivery returns
// ErrItemClosed and changes nothing.
func (s *Store) FinishVerdictItem(ctx context.Context, key string, v Verdict, run *ExpertRun) error {
	status, reason := review.ItemDone, ""
	if v.Verdict == review.VerdictFailed {
		status, reason = review.ItemFailed, v.Reason
		if run != nil && run.Error != "" {
			reason = fmt.Sprintf("%s run stopped (%s): %s", v.Stage, run.StopReason, run.Error)
		} else if run != nil {
			reason = fmt.Sprintf("%s run stopped (%s)", v.Stage, run.StopReason)
		}
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockPending(ctx, tx, v.ReviewID, v.Stage, key); err != nil {
			return err
		}
		if err := insertVerdict(ctx, tx, v); err != nil {
			return err
		}
		if run != nil {
			if err := insertExpertRun(ctx, tx, v.ReviewID, *run); err != nil {
				return err
			}
		}
		return closeItem(ctx, tx, v.ReviewID, v.Stage, key, status, reason)
	})
}

func insertExpertRun(ctx context.Context, tx pgx.Tx, reviewID string, r ExpertRun) error {
	orEmpty := func(m json.RawMessage, def string) json.RawMessage {
		if len(m) == 0 {
			return json.RawMessage(def)
		}
		return m
	}
	tag, err := tx.Exec(ctx, `
		INSERT INTO expert_runs (review_id, finding_id, stop_reason, rounds, tool_calls, phases, checks,
		                         tokens_in, tokens_out, duration_ms, error, tool_outcomes)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)
		ON CONFLICT (finding_id) DO NOTHING`,
		reviewID, r.FindingID, r.StopReason, r.Rounds, orEmpty(r.ToolCalls, `{}`), orEmpty(r.Phases, `[]`),
		orEmpty(r.Checks, `[]`), r.TokensIn, r.TokensOut, r.Duration.Milliseconds(), r.Error, orEmpty(r.ToolOutcomes, `{}`))
	if err != nil {
		return fmt.Errorf("insert expert run of finding %d: %w", r.FindingID, err)
	}
	if tag.RowsAffected() == 0 || len(r.Calls) == 0 {
		return nil // stored by an earlier delivery, with its calls
	}
	return insertToolCalls(ctx, tx, reviewID, r.FindingID, r.Calls)
}

// insertToolCalls stores the tool calls of one run in one statement.
func insertToolCalls(ctx context.Context, tx pgx.Tx, reviewID string, findingID int64, calls []ExpertToolCall) error {
	n := len(calls)
	rounds, seqs, sizes, latencies := make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	tools, args, outcomes := make([]string, n), make([]string, n), make([]string, n)
	for i, c := range calls {
		rounds[i], seqs[i], sizes[i] = int32(c.Round), int32(c.Seq), int32(min(c.ResultBytes, math.MaxInt32))
		latencies[i] = int32(min(c.Latency.Milliseconds(), math.MaxInt32))
		tools[i], args[i], outcomes[i] = c.Tool, c.Args, c.Outcome
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO expert_tool_calls (review_id, finding_id, round, seq, tool, args, outcome, result_bytes, latency_ms)
		SELECT $1, $2, c.round, c.seq, c.tool, c.args, c.outcome, c.result_bytes, c.latency_ms
		FROM unnest($3::int[], $4::int[], $5::text[], $6::text[], $7::text[], $8::int[], $9::int[])
		     AS c(round, seq, tool, args, outcome, result_bytes, latency_ms)
		ON CONFLICT (finding_id, seq) DO NOTHING`,
		reviewID, findingID, rounds, seqs, tools, args, outcomes, sizes, latencies)
	if err != nil {
		return fmt.Errorf("insert tool calls of the expert run of finding %d: %w", findingID, err)
	}
	return nil
}

// ListExpertToolCalls returns every expert tool call of a review, by
// finding then order.
func (s *Store) ListExpertToolCalls(ctx context.Context, reviewID string) ([]ExpertToolCall, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT finding_id, round, seq, tool, args, outcome, result_bytes, latency_ms
		FROM expert_tool_calls WHERE review_id = $1 ORDER BY finding_id, seq`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list expert tool calls of %s: %w", reviewID, err)
	}
	defer rows.Close()
	var out []ExpertToolCall
	for rows.Next() {
		var c ExpertToolCall
		var ms int
		if err := rows.Scan(&c.FindingID, &c.Round, &c.Seq, &c.Tool, &c.Args, &c.Outcome, &c.ResultBytes, &ms); err != nil {
			return nil, fmt.Errorf("list expert tool calls of %s: %w", reviewID, err)
		}
		c.Latency = time.Duration(ms) * time.Millisecond
		out = append(out, c)
	}
	return out, rows.Err()
}

// ListVerdicts returns every verdict of a review, by finding then stage order.
func (s *Store) ListVerdicts(ctx context.Context, reviewID string) ([]Verdict, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT finding_id, stage, verdict, confidence_before, confidence_after, reason, evidence,
		       model, tokens_in, tokens_out, latency_ms, created_at
		FROM verdicts WHERE review_id = $1 ORDER BY finding_id, id`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list verdicts of %s: %w", reviewID, err)
	}
	defer rows.Close()
	var out []Verdict
	for rows.Next() {
		v := Verdict{ReviewID: reviewID}
		var stage string
		var ms int
		if err := rows.Scan(&v.FindingID, &stage, &v.Verdict, &v.ConfidenceBefore, &v.ConfidenceAfter,
			&v.Reason, &v.Evidence, &v.Model, &v.TokensIn, &v.TokensOut, &ms, &v.CreatedAt); err != nil {
			return nil, err
		}
		v.Stage, v.Latency = review.Stage(stage), time.Duration(ms)*time.Millisecond
		out = append(out, v)
	}
	return out, rows.Err()
}

// ListExpertRuns returns every expert run of a review keyed by finding.
func (s *Store) ListExpertRuns(ctx context.Context, reviewID string) (map[int64]ExpertRun, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT finding_id, stop_reason, rounds, tool_calls, phases, checks, tokens_in, tokens_out,
		       duration_ms, error, tool_outcomes
		FROM expert_runs WHERE review_id = $1`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list expert runs of %s: %w", reviewID, err)
	}
	defer rows.Close()
	out := map[int64]ExpertRun{}
	for rows.Next() {
		var r ExpertRun
		var ms int
		if err := rows.Scan(&r.FindingID, &r.StopReason, &r.Rounds, &r.ToolCalls, &r.Phases, &r.Checks,
			&r.TokensIn, &r.TokensOut, &ms, &r.Error, &r.ToolOutcomes); err != nil {
			return nil, err
		}
		r.Duration = time.Duration(ms) * time.Millisecond
		out[r.FindingID] = r
	}
	return out, rows.Err()
}

// EvalCounts is the eval gate's tally for one risk type.
type EvalCounts struct {
	Confirmed, Disputed, Uncertain int
}

// EvalSummary tallies eval verdicts per risk type from the verdict rows.
func (s *Store) EvalSummary(ctx context.Context, reviewID string) (map[review.RiskType]EvalCounts, error) {
	return evalSummary(ctx, s.pool, reviewID)
}

func evalSummary(ctx context.Context, q querier, reviewID string) (map[review.RiskType]EvalCounts, error) {
	rows, err := q.Query(ctx, `
		SELECT f.risk_type,
		       count(*) FILTER (WHERE v.verdict = 'confirmed'),
		       count(*) FILTER (WHERE v.verdict = 'disputed'),
		       count(*) FILTER (WHERE v.verdict = 'uncertain')
		FROM verdicts v JOIN findings f ON f.id = v.finding_id
		WHERE v.review_id = $1 AND v.stage = 'eval' AND v.verdict IN ('confirmed','disputed','uncertain')
		GROUP BY f.risk_type`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("eval summary of %s: %w", reviewID, err)
	}
	defer rows.Close()
	out := map[review.RiskType]EvalCounts{}
	for rows.Next() {
		var risk string
		var c EvalCounts
		if err := rows.Scan(&risk, &c.Confirmed, &c.Disputed, &c.Uncertain); err != nil {
			return nil, err
		}
		out[review.RiskType(risk)] = c
	}
	return out, rows.Err()
}

// GetVerdict loads the verdict a finding received at a stage.
func (s *Store) GetVerdict(ctx context.Context, findingID int64, stage review.Stage) (Verdict, error) {
	v := Verdict{FindingID: findingID, Stage: stage}
	var ms int
	err := s.pool.QueryRow(ctx, `
		SELECT review_id, verdict, confidence_before, confidence_after, reason, evidence, model,
		       tokens_in, tokens_out, latency_ms, created_at
		FROM verdicts WHERE finding_id = $1 AND stage = $2`, findingID, string(stage)).
		Scan(&v.ReviewID, &v.Verdict, &v.ConfidenceBefore, &v.ConfidenceAfter, &v.Reason, &v.Evidence, &v.Model,
			&v.TokensIn, &v.TokensOut, &ms, &v.CreatedAt)
	if err != nil {
		return Verdict{}, fmt.Errorf("get %s verdict of finding %d: %w", stage, findingID, translate(err))
	}
	v.Latency = time.Duration(ms) * time.Millisecond
	return v, nil
}
