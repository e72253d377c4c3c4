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

// LLMCallStarted is the status of a call that was sent and has not been
// completed yet (or whose worker died waiting for the reply).
const LLMCallStarted = "started"

// LLMCall is one recorded call to the LLM endpoint.
type LLMCall struct {
	// ID is the row's ID: set by StartLLMCall, and given back to
	// RecordLLMCall to complete that row rather than insert a new one.
	ID         int64
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
	// StartedAt is when the client started the request (zero: now).
	StartedAt time.Time
}

func nullableJSON(m json.RawMessage) any {
	if len(m) == 0 || !json.Valid(m) {
		return nil
	}
	return m
}

func nullableTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// StartLLMCall inserts a call about to be sent, with status "started", and
// returns its row ID. Costs and analysts count it from now on; a worker
// that dies before the reply leaves it "started".
func (s *Store) StartLLMCall(ctx context.Context, c LLMCall) (int64, error) {
	var reviewID any
	if c.ReviewID != "" {
		reviewID = c.ReviewID
	}
	var id int64
	err := s.pool.QueryRow(ctx, `
		INSERT INTO llm_calls (review_id, stage, item_key, model, prompt_hash, status, request, started_at)
		VALUES ($1,$2,$3,$4,$5,'started',$6, coalesce($7, now())) RETURNING id`,
		reviewID, c.Stage, c.ItemKey, c.Model, c.PromptHash, nullableJSON(c.Request), nullableTime(c.StartedAt)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("record started llm call: %w", err)
	}
	return id, nil
}

// RecordLLMCall stores one call's outcome and adds its tokens to the
// review's totals. With c.ID set it completes the row StartLLMCall
// inserted; otherwise (a call refused before it was sent) it inserts one.
func (s *Store) RecordLLMCall(ctx context.Context, c LLMCall) error {
	var reviewID any
	if c.ReviewID != "" {
		reviewID = c.ReviewID
	}
	var err error
	if c.ID != 0 {
		_, err = s.pool.Exec(ctx, `
			WITH upd AS (
				UPDATE llm_calls SET status = $2, error = $3, tokens_in = $4, tokens_out = $5,
				       latency_ms = $6, response = $7, finished_at = now()
				WHERE id = $1 RETURNING review_id
			)
			UPDATE reviews SET tokens_in = tokens_in + $4, tokens_out = tokens_out + $5
			WHERE id = (SELECT review_id FROM upd)`,
			c.ID, c.Status, c.Error, c.TokensIn, c.TokensOut, c.Latency.Milliseconds(), nullableJSON(c.Response))
	} else {
		_, err = s.pool.Exec(ctx, `
			WITH ins AS (
				INSERT INTO llm_calls (review_id, stage, item_key, model, prompt_hash, status, error,
				                       tokens_in, tokens_out, latency_ms, request, response, started_at, finished_at)
				VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12, coalesce($13, now()), now())
			)
			UPDATE reviews SET tokens_in = tokens_in + $8, tokens_out = tokens_out + $9 WHERE id = $1`,
			reviewID, c.Stage, c.ItemKey, c.Model, c.PromptHash, c.Status, c.Error, c.TokensIn, c.TokensOut,
			c.Latency.Milliseconds(), nullableJSON(c.Request), nullableJSON(c.Response), nullableTime(c.StartedAt))
	}
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
		SELECT id, stage, item_key, model, prompt_hash, status, error, tokens_in, tokens_out, latency_ms,
		       coalesce(request, 'null'), coalesce(response, 'null'), created_at, coalesce(started_at, created_at)
		FROM llm_calls WHERE review_id = $1 ORDER BY id`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list llm calls of %s: %w", reviewID, err)
	}
	defer rows.Close()
	var out []LLMCall
	for rows.Next() {
		c := LLMCall{ReviewID: reviewID}
		var ms int
		if err := rows.Scan(&c.ID, &c.Stage, &c.ItemKey, &c.Model, &c.PromptHash, &c.Status, &c.Error,
			&c.TokensIn, &c.TokensOut, &ms, &c.Request, &c.Response, &c.CreatedAt, &c.StartedAt); err != nil {
			return nil, err
		}
		c.Latency = time.Duration(ms) * time.Millisecond
		out = append(out, c)
	}
	return out, rows.Err()
}
