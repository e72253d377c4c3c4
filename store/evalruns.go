package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// EvalRun is one run of `reviewfleet eval` over a dataset, with its totals.
type EvalRun struct {
	ID         string
	CreatedAt  time.Time
	Dataset    string
	Label      string
	JudgeModel string
	Window     int
	Harness    json.RawMessage
	Cases      int
	Golden     int
	TP, FP, FN int
	Precision  float64
	Recall     float64
	F1         float64
	Runtime    time.Duration
	LLMCalls   int
	TokensIn   int64
	TokensOut  int64
	Cost       float64
	JudgeCalls int
	JudgeCost  float64
	Results    []EvalResult
}

// EvalResult is one case of an evaluation run.
type EvalResult struct {
	Case       string
	ReviewID   string // empty when the case could not be reviewed
	Golden     int
	TP, FP, FN int
	Runtime    time.Duration
	LLMCalls   int
	TokensIn   int64
	TokensOut  int64
	Cost       float64
	Error      string
	Detail     json.RawMessage
}

// SaveEvalRun stores a run and its cases in one transaction.
func (s *Store) SaveEvalRun(ctx context.Context, r EvalRun) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `
			INSERT INTO eval_runs (id, dataset, label, judge_model, match_window, harness, cases, golden,
			                       tp, fp, fn, precision, recall, f1, runtime_ms, llm_calls, tokens_in, tokens_out,
			                       cost, judge_calls, judge_cost)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`,
			r.ID, r.Dataset, r.Label, r.JudgeModel, r.Window, orEmptyObject(r.Harness), r.Cases, r.Golden,
			r.TP, r.FP, r.FN, r.Precision, r.Recall, r.F1, r.Runtime.Milliseconds(), r.LLMCalls, r.TokensIn, r.TokensOut,
			r.Cost, r.JudgeCalls, r.JudgeCost)
		if err != nil {
			return fmt.Errorf("store eval run %s: %w", r.ID, err)
		}
		for _, c := range r.Results {
			var review any
			if c.ReviewID != "" {
				review = c.ReviewID
			}
			_, err := tx.Exec(ctx, `
				INSERT INTO eval_results (run_id, case_name, review_id, golden, tp, fp, fn, runtime_ms, llm_calls,
				                          tokens_in, tokens_out, cost, error, detail)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
				r.ID, c.Case, review, c.Golden, c.TP, c.FP, c.FN, c.Runtime.Milliseconds(), c.LLMCalls,
				c.TokensIn, c.TokensOut, c.Cost, c.Error, orEmptyObject(c.Detail))
			if err != nil {
				return fmt.Errorf("store eval result %s of run %s: %w", c.Case, r.ID, err)
			}
		}
		return nil
	})
}

// GetEvalRun reads a run and its cases (in case name order).
func (s *Store) GetEvalRun(ctx context.Context, id string) (EvalRun, error) {
	var r EvalRun
	var runtimeMS int64
	err := s.pool.QueryRow(ctx, `
		SELECT id, created_at, dataset, label, judge_model, match_window, harness, cases, golden, tp, fp, fn,
		       precision, recall, f1, runtime_ms, llm_calls, tokens_in, tokens_out, cost, judge_calls, judge_cost
		FROM eval_runs WHERE id = $1`, id).
		Scan(&r.ID, &r.CreatedAt, &r.Dataset, &r.Label, &r.JudgeModel, &r.Window, &r.Harness, &r.Cases, &r.Golden,
			&r.TP, &r.FP, &r.FN, &r.Precision, &r.Recall, &r.F1, &runtimeMS, &r.LLMCalls, &r.TokensIn, &r.TokensOut,
			&r.Cost, &r.JudgeCalls, &r.JudgeCost)
	if err != nil {
		return EvalRun{}, fmt.Errorf("eval run %s: %w", id, translate(err))
	}
	r.Runtime = time.Duration(runtimeMS) * time.Millisecond
	rows, err := s.pool.Query(ctx, `
		SELECT case_name, coalesce(review_id::text, ''), golden, tp, fp, fn, runtime_ms, llm_calls,
		       tokens_in, tokens_out, cost, error, detail
		FROM eval_results WHERE run_id = $1 ORDER BY case_name`, id)
	if err != nil {
		return EvalRun{}, fmt.Errorf("eval results of run %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var c EvalResult
		var ms int64
		if err := rows.Scan(&c.Case, &c.ReviewID, &c.Golden, &c.TP, &c.FP, &c.FN, &ms, &c.LLMCalls,
			&c.TokensIn, &c.TokensOut, &c.Cost, &c.Error, &c.Detail); err != nil {
			return EvalRun{}, fmt.Errorf("read eval result of run %s: %w", id, err)
		}
		c.Runtime = time.Duration(ms) * time.Millisecond
		r.Results = append(r.Results, c)
	}
	if err := rows.Err(); err != nil {
		return EvalRun{}, fmt.Errorf("eval results of run %s: %w", id, err)
	}
	return r, nil
}

func orEmptyObject(m json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return json.RawMessage(`{}`)
	}
	return m
}
