package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
)

// FinishIntentItem stores the findings one intent item produced and marks
// the item done, in one transaction. A second delivery of the same item
// returns ErrItemClosed and writes nothing.
func (s *Store) FinishIntentItem(ctx context.Context, reviewID, key string, findings []review.Finding) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockPending(ctx, tx, reviewID, review.StageIntent, key); err != nil {
			return err
		}
		q := s.q.WithTx(tx)
		for i, f := range findings {
			if err := q.InsertFinding(ctx, sqlcdb.InsertFindingParams{
				ReviewID: reviewID, Origin: key, Ordinal: i32(i), RiskType: f.RiskType, File: f.File,
				LineStart: i32(f.LineStart), LineEnd: i32(f.LineEnd), Description: f.Description,
				Suggestion: f.Suggestion, Severity: f.Severity, Confidence: review.ClampConfidence(f.Confidence),
				Quote: f.Quote, FixDiff: f.Fix, Fingerprint: f.Fingerprint,
			}); err != nil {
				return fmt.Errorf("insert finding %d of %s: %w", i, key, err)
			}
		}
		return closeItem(ctx, tx, reviewID, review.StageIntent, key, review.ItemDone, "")
	})
}

func findingFromRow(r sqlcdb.Finding) review.Finding {
	f := review.Finding{
		ID: r.ID, ReviewID: r.ReviewID, RiskType: r.RiskType, File: r.File, LineStart: int(r.LineStart),
		LineEnd: int(r.LineEnd), Description: r.Description, Suggestion: r.Suggestion, Severity: r.Severity,
		Confidence: r.Confidence, Status: r.Status, DropReason: r.DropReason, Quote: r.Quote, Fix: r.FixDiff,
		Fingerprint: r.Fingerprint, ResolvedIn: orEmpty(r.ResolvedIn),
	}
	if r.MergedInto != nil {
		f.MergedInto = *r.MergedInto
	}
	if r.CarriedFrom != nil {
		f.CarriedFrom = *r.CarriedFrom
	}
	return f
}

func findingsFromRows(rows []sqlcdb.Finding) []review.Finding {
	var out []review.Finding
	for _, r := range rows {
		out = append(out, findingFromRow(r))
	}
	return out
}

func listFindings(ctx context.Context, q *sqlcdb.Queries, reviewID string) ([]review.Finding, error) {
	rows, err := q.ListFindings(ctx, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list findings of %s: %w", reviewID, err)
	}
	return findingsFromRows(rows), nil
}

// ListFindings returns every finding of a review (all statuses) by ID.
func (s *Store) ListFindings(ctx context.Context, reviewID string) ([]review.Finding, error) {
	return listFindings(ctx, s.q, reviewID)
}

// GetFinding loads one finding.
func (s *Store) GetFinding(ctx context.Context, id int64) (review.Finding, error) {
	r, err := s.q.GetFinding(ctx, id)
	if err != nil {
		return review.Finding{}, fmt.Errorf("get finding %d: %w", id, translate(err))
	}
	return findingFromRow(r), nil
}

func insertVerdict(ctx context.Context, q *sqlcdb.Queries, v review.Verdict) error {
	n, err := q.InsertVerdict(ctx, sqlcdb.InsertVerdictParams{
		ReviewID: v.ReviewID, FindingID: v.FindingID, Stage: v.Stage, Verdict: v.Verdict,
		ConfidenceBefore: v.ConfidenceBefore, ConfidenceAfter: v.ConfidenceAfter, Reason: v.Reason,
		Evidence: orJSON(v.Evidence, `[]`), Model: v.Model, TokensIn: i32(v.TokensIn), TokensOut: i32(v.TokensOut),
		LatencyMS: i32(v.Latency.Milliseconds()),
	})
	if err != nil {
		return fmt.Errorf("insert %s verdict of finding %d: %w", v.Stage, v.FindingID, err)
	}
	if n == 0 {
		return nil // already judged at this stage: keep the first verdict
	}
	if err := q.SetFindingConfidence(ctx, sqlcdb.SetFindingConfidenceParams{
		ID: v.FindingID, Confidence: review.ClampConfidence(v.ConfidenceAfter),
	}); err != nil {
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
func (s *Store) FinishVerdictItem(ctx context.Context, key string, v review.Verdict, run *review.ExpertRun) error {
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
		q := s.q.WithTx(tx)
		if err := insertVerdict(ctx, q, v); err != nil {
			return err
		}
		if run != nil {
			if err := insertExpertRun(ctx, q, v.ReviewID, *run); err != nil {
				return err
			}
		}
		return closeItem(ctx, tx, v.ReviewID, v.Stage, key, status, reason)
	})
}

func insertExpertRun(ctx context.Context, q *sqlcdb.Queries, reviewID string, r review.ExpertRun) error {
	n, err := q.InsertExpertRun(ctx, sqlcdb.InsertExpertRunParams{
		ReviewID: reviewID, FindingID: r.FindingID, StopReason: r.StopReason, Rounds: i32(r.Rounds),
		ToolCalls: orJSON(r.ToolCalls, `{}`), Phases: orJSON(r.Phases, `[]`), Checks: orJSON(r.Checks, `[]`),
		TokensIn: i32(r.TokensIn), TokensOut: i32(r.TokensOut), DurationMS: i32(r.Duration.Milliseconds()),
		Error: r.Error, ToolOutcomes: orJSON(r.ToolOutcomes, `{}`),
	})
	if err != nil {
		return fmt.Errorf("insert expert run of finding %d: %w", r.FindingID, err)
	}
	if n == 0 || len(r.Calls) == 0 {
		return nil // stored by an earlier delivery, with its calls
	}
	return insertToolCalls(ctx, q, reviewID, r.FindingID, r.Calls)
}

// insertToolCalls stores the tool calls of one run in one statement.
func insertToolCalls(ctx context.Context, q *sqlcdb.Queries, reviewID string, findingID int64, calls []review.ExpertToolCall) error {
	n := len(calls)
	p := sqlcdb.InsertToolCallsParams{ReviewID: reviewID, FindingID: findingID,
		Rounds: make([]int32, n), Seqs: make([]int32, n), ResultBytes: make([]int32, n), LatenciesMS: make([]int32, n),
		Tools: make([]string, n), Args: make([]string, n), Outcomes: make([]string, n)}
	for i, c := range calls {
		p.Rounds[i], p.Seqs[i], p.ResultBytes[i] = i32(c.Round), i32(c.Seq), i32(c.ResultBytes)
		p.LatenciesMS[i] = i32(c.Latency.Milliseconds())
		p.Tools[i], p.Args[i], p.Outcomes[i] = c.Tool, c.Args, c.Outcome
	}
	if err := q.InsertToolCalls(ctx, p); err != nil {
		return fmt.Errorf("insert tool calls of the expert run of finding %d: %w", findingID, err)
	}
	return nil
}

// ListExpertToolCalls returns every expert tool call of a review, by
// finding then order.
func (s *Store) ListExpertToolCalls(ctx context.Context, reviewID string) ([]review.ExpertToolCall, error) {
	rows, err := s.q.ListExpertToolCalls(ctx, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list expert tool calls of %s: %w", reviewID, err)
	}
	var out []review.ExpertToolCall
	for _, r := range rows {
		out = append(out, review.ExpertToolCall{FindingID: r.FindingID, Round: int(r.Round), Seq: int(r.Seq), Tool: r.Tool,
			Args: r.Args, Outcome: r.Outcome, ResultBytes: int(r.ResultBytes), Latency: ms(r.LatencyMS)})
	}
	return out, nil
}

// ListVerdicts returns every verdict of a review, by finding then stage order.
func (s *Store) ListVerdicts(ctx context.Context, reviewID string) ([]review.Verdict, error) {
	rows, err := s.q.ListVerdicts(ctx, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list verdicts of %s: %w", reviewID, err)
	}
	var out []review.Verdict
	for _, r := range rows {
		out = append(out, review.Verdict{ReviewID: reviewID, FindingID: r.FindingID, Stage: r.Stage, Verdict: r.Verdict,
			ConfidenceBefore: r.ConfidenceBefore, ConfidenceAfter: r.ConfidenceAfter, Reason: r.Reason,
			Evidence: r.Evidence, Model: r.Model, TokensIn: int(r.TokensIn), TokensOut: int(r.TokensOut),
			Latency: ms(r.LatencyMS), CreatedAt: r.CreatedAt})
	}
	return out, nil
}

// ListExpertRuns returns every expert run of a review keyed by finding.
func (s *Store) ListExpertRuns(ctx context.Context, reviewID string) (map[int64]review.ExpertRun, error) {
	rows, err := s.q.ListExpertRuns(ctx, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list expert runs of %s: %w", reviewID, err)
	}
	out := map[int64]review.ExpertRun{}
	for _, r := range rows {
		out[r.FindingID] = review.ExpertRun{FindingID: r.FindingID, StopReason: r.StopReason, Rounds: int(r.Rounds),
			ToolCalls: r.ToolCalls, Phases: r.Phases, Checks: r.Checks, TokensIn: int(r.TokensIn),
			TokensOut: int(r.TokensOut), Duration: ms(r.DurationMS), Error: r.Error, ToolOutcomes: r.ToolOutcomes}
	}
	return out, nil
}

// EvalCounts is the eval gate's tally for one risk type.
type EvalCounts struct {
	Confirmed, Disputed, Uncertain int
}

// EvalSummary tallies eval verdicts per risk type from the verdict rows.
func (s *Store) EvalSummary(ctx context.Context, reviewID string) (map[review.RiskType]EvalCounts, error) {
	return evalSummary(ctx, s.q, reviewID)
}

func evalSummary(ctx context.Context, q *sqlcdb.Queries, reviewID string) (map[review.RiskType]EvalCounts, error) {
	rows, err := q.EvalSummary(ctx, reviewID)
	if err != nil {
		return nil, fmt.Errorf("eval summary of %s: %w", reviewID, err)
	}
	out := map[review.RiskType]EvalCounts{}
	for _, r := range rows {
		out[r.RiskType] = EvalCounts{Confirmed: int(r.Confirmed), Disputed: int(r.Disputed), Uncertain: int(r.Uncertain)}
	}
	return out, nil
}

// GetVerdict loads the verdict a finding received at a stage.
func (s *Store) GetVerdict(ctx context.Context, findingID int64, stage review.Stage) (review.Verdict, error) {
	r, err := s.q.GetVerdict(ctx, sqlcdb.GetVerdictParams{FindingID: findingID, Stage: stage})
	if err != nil {
		return review.Verdict{}, fmt.Errorf("get %s verdict of finding %d: %w", stage, findingID, translate(err))
	}
	return review.Verdict{FindingID: findingID, Stage: stage, ReviewID: r.ReviewID, Verdict: r.Verdict,
		ConfidenceBefore: r.ConfidenceBefore, ConfidenceAfter: r.ConfidenceAfter, Reason: r.Reason,
		Evidence: r.Evidence, Model: r.Model, TokensIn: int(r.TokensIn), TokensOut: int(r.TokensOut),
		Latency: ms(r.LatencyMS), CreatedAt: r.CreatedAt}, nil
}

// ms is a duration stored in milliseconds.
func ms(n int32) time.Duration { return time.Duration(n) * time.Millisecond }
