package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
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
		q := s.q.WithTx(tx)
		err := q.InsertEvalRun(ctx, sqlcdb.InsertEvalRunParams{
			ID: r.ID, Dataset: r.Dataset, Label: r.Label, JudgeModel: r.JudgeModel, MatchWindow: i32(r.Window),
			Harness: orJSON(r.Harness, `{}`), Cases: i32(r.Cases), Golden: i32(r.Golden), TP: i32(r.TP), FP: i32(r.FP),
			FN: i32(r.FN), Precision: r.Precision, Recall: r.Recall, F1: r.F1, RuntimeMS: r.Runtime.Milliseconds(),
			LLMCalls: i32(r.LLMCalls), TokensIn: r.TokensIn, TokensOut: r.TokensOut, Cost: r.Cost,
			JudgeCalls: i32(r.JudgeCalls), JudgeCost: r.JudgeCost,
		})
		if err != nil {
			return fmt.Errorf("store eval run %s: %w", r.ID, err)
		}
		for _, c := range r.Results {
			err := q.InsertEvalResult(ctx, sqlcdb.InsertEvalResultParams{
				RunID: r.ID, CaseName: c.Case, ReviewID: nonEmpty(c.ReviewID), Golden: i32(c.Golden), TP: i32(c.TP),
				FP: i32(c.FP), FN: i32(c.FN), RuntimeMS: c.Runtime.Milliseconds(), LLMCalls: i32(c.LLMCalls),
				TokensIn: c.TokensIn, TokensOut: c.TokensOut, Cost: c.Cost, Error: c.Error, Detail: orJSON(c.Detail, `{}`),
			})
			if err != nil {
				return fmt.Errorf("store eval result %s of run %s: %w", c.Case, r.ID, err)
			}
		}
		return nil
	})
}

// GetEvalRun reads a run and its cases (in case name order).
func (s *Store) GetEvalRun(ctx context.Context, id string) (EvalRun, error) {
	run, err := s.q.GetEvalRun(ctx, id)
	if err != nil {
		return EvalRun{}, fmt.Errorf("eval run %s: %w", id, translate(err))
	}
	r := EvalRun{ID: run.ID, CreatedAt: run.CreatedAt, Dataset: run.Dataset, Label: run.Label,
		JudgeModel: run.JudgeModel, Window: int(run.MatchWindow), Harness: run.Harness, Cases: int(run.Cases),
		Golden: int(run.Golden), TP: int(run.TP), FP: int(run.FP), FN: int(run.FN), Precision: run.Precision,
		Recall: run.Recall, F1: run.F1, Runtime: time.Duration(run.RuntimeMS) * time.Millisecond,
		LLMCalls: int(run.LLMCalls), TokensIn: run.TokensIn, TokensOut: run.TokensOut, Cost: run.Cost,
		JudgeCalls: int(run.JudgeCalls), JudgeCost: run.JudgeCost}
	results, err := s.q.EvalResults(ctx, id)
	if err != nil {
		return EvalRun{}, fmt.Errorf("eval results of run %s: %w", id, err)
	}
	for _, c := range results {
		r.Results = append(r.Results, EvalResult{Case: c.CaseName, ReviewID: orEmpty(c.ReviewID), Golden: int(c.Golden),
			TP: int(c.TP), FP: int(c.FP), FN: int(c.FN), Runtime: time.Duration(c.RuntimeMS) * time.Millisecond,
			LLMCalls: int(c.LLMCalls), TokensIn: c.TokensIn, TokensOut: c.TokensOut, Cost: c.Cost, Error: c.Error,
			Detail: c.Detail})
	}
	return r, nil
}
