package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrBudgetExceeded is returned when a review has spent its LLM budget.
var ErrBudgetExceeded = errors.New("review LLM budget exceeded")

// LLMCall is one recorded call to the LLM endpoint.
type LLMCall struct {
	ReviewID   string
	Stage      string
	ItemKey    string
	Model      string
	PromptHash string
	Status     string
	Error      string
	TokensIn   int
	TokensOut  int
	Latency    time.Duration
	Request    json.RawMessage
	Response   json.RawMessage
	CreatedAt  time.Time
}

// RecordLLMCall stores one call and adds its tokens to the review's totals.
func (s *Store) RecordLLMCall(ctx context.Context, c LLMCall) error {
	var reviewID any
	if c.ReviewID != "" {
		reviewID = c.ReviewID
	}
	nullable := func(m json.RawMessage) any {
		if len(m) == 0 || !json.Valid(m) {
			return nil
		}
		return m
	}
	_, err := s.pool.Exec(ctx, `
		WITH ins AS (
			INSERT INTO llm_calls (review_id, stage, item_key, model, prompt_hash, status, error,
			                       tokens_in, tokens_out, latency_ms, request, response)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)
		)
		UPDATE reviews SET tokens_in = tokens_in + $8, tokens_out = tokens_out + $9 WHERE id = $1`,
		reviewID, c.Stage, c.ItemKey, c.Model, c.PromptHash, c.Status, c.Error, c.TokensIn, c.TokensOut,
		c.Latency.Milliseconds(), nullable(c.Request), nullable(c.Response))
	if err != nil {
		return fmt.Errorf("record llm call: %w", err)
	}
	return nil
}

// ReserveLLMCall counts one more call against a review's budget, refusing
// with ErrBudgetExceeded when maxCalls calls were already made or the
// tokens spent plus estTokens would pass maxTokens (0 means unlimited).
func (s *Store) ReserveLLMCall(ctx context.Context, reviewID string, maxCalls int, maxTokens int64, estTokens int) error {
	tag, err := s.pool.Exec(ctx, `
		UPDATE reviews SET llm_calls = llm_calls + 1
		WHERE id = $1 AND ($2 = 0 OR llm_calls < $2)
		  AND ($3 = 0 OR tokens_in + tokens_out + $4 <= $3)`, reviewID, maxCalls, maxTokens, estTokens)
	if err != nil {
		return fmt.Errorf("reserve llm call for %s: %w", reviewID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w (review %s: at most %d calls and %d tokens)", ErrBudgetExceeded, reviewID, maxCalls, maxTokens)
	}
	return nil
}

// ListLLMCalls returns a review's recorded calls in order.
func (s *Store) ListLLMCalls(ctx context.Context, reviewID string) ([]LLMCall, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT stage, item_key, model, prompt_hash, status, error, tokens_in, tokens_out, latency_ms,
		       coalesce(request, 'null'), coalesce(response, 'null'), created_at
		FROM llm_calls WHERE review_id = $1 ORDER BY id`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list llm calls of %s: %w", reviewID, err)
	}
	defer rows.Close()
	var out []LLMCall
	for rows.Next() {
		c := LLMCall{ReviewID: reviewID}
		var ms int
		if err := rows.Scan(&c.Stage, &c.ItemKey, &c.Model, &c.PromptHash, &c.Status, &c.Error,
			&c.TokensIn, &c.TokensOut, &ms, &c.Request, &c.Response, &c.CreatedAt); err != nil {
			return nil, err
		}
		c.Latency = time.Duration(ms) * time.Millisecond
		out = append(out, c)
	}
	return out, rows.Err()
}
