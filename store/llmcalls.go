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
	// Endpoint names the pool endpoint that answered ("" when unknown).
	Endpoint string
	// Cost is the call's estimated cost in US dollars (0 when the model
	// has no price in llm.prices).
	Cost float64
}

func nullableTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// StartLLMCall inserts a call about to be sent, with status "started", and
// returns its row ID. Costs and analysts count it from now on; a worker
// that dies before the reply leaves it "started". The request body is
// stored as its parts in llm_messages, each once however many calls (or
// expert rounds) resend it.
func (s *Store) StartLLMCall(ctx context.Context, c LLMCall) (int64, error) {
	var reviewID any
	if c.ReviewID != "" {
		reviewID = c.ReviewID
	}
	req, err := s.storeRequest(ctx, c.Request)
	if err != nil {
		return 0, fmt.Errorf("record started llm call: %w", err)
	}
	var id int64
	err = s.pool.QueryRow(ctx, `
		INSERT INTO llm_calls (review_id, stage, item_key, model, prompt_hash, status, message_hashes, params_hash, started_at, endpoint)
		VALUES ($1,$2,$3,$4,$5,'started',$6,$7, coalesce($8, now()), $9) RETURNING id`,
		reviewID, c.Stage, c.ItemKey, c.Model, c.PromptHash, req.messages, req.params, nullableTime(c.StartedAt), c.Endpoint).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("record started llm call: %w", err)
	}
	return id, nil
}

// RecordLLMCall stores one call's outcome. With c.ID set it completes the
// row StartLLMCall inserted; otherwise (a call refused before it was sent)
// it inserts one. The review's token and cost totals are not touched here:
// they grow once per item, when the item closes. Bodies are stored like
// StartLLMCall's, once by content.
func (s *Store) RecordLLMCall(ctx context.Context, c LLMCall) error {
	var reviewID any
	if c.ReviewID != "" {
		reviewID = c.ReviewID
	}
	reply, err := s.storeReply(ctx, c.Response)
	if err != nil {
		return fmt.Errorf("record llm call: %w", err)
	}
	if c.ID != 0 {
		_, err = s.pool.Exec(ctx, `
			UPDATE llm_calls SET status = $2, error = $3, tokens_in = $4, tokens_out = $5,
			       latency_ms = $6, reply_hash = $7, finished_at = now(), cost = $8
			WHERE id = $1`,
			c.ID, c.Status, c.Error, c.TokensIn, c.TokensOut, c.Latency.Milliseconds(), reply, c.Cost)
	} else {
		var req storedRequest
		if req, err = s.storeRequest(ctx, c.Request); err != nil {
			return fmt.Errorf("record llm call: %w", err)
		}
		_, err = s.pool.Exec(ctx, `
			INSERT INTO llm_calls (review_id, stage, item_key, model, prompt_hash, status, error,
			                       tokens_in, tokens_out, latency_ms, message_hashes, params_hash, reply_hash, started_at, finished_at, cost, endpoint)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13, coalesce($14, now()), now(), $15, $16)`,
			reviewID, c.Stage, c.ItemKey, c.Model, c.PromptHash, c.Status, c.Error, c.TokensIn, c.TokensOut,
			c.Latency.Milliseconds(), req.messages, req.params, reply, nullableTime(c.StartedAt), c.Cost, c.Endpoint)
	}
	if err != nil {
		return fmt.Errorf("record llm call: %w", err)
	}
	return nil
}

// ReserveLLMCall counts one more call against a review's budget, refusing
// with ErrBudgetExceeded when its call cap was reached or the tokens spent
// plus estTokens would pass its token cap (0 means unlimited). The caps
// are the review's own, from the configuration it was submitted with
// (llm.max_calls_per_review, llm.max_tokens_per_review); maxCalls and
// maxTokens apply only to a review whose snapshot has none. Tokens count
// per closed item, so in-flight items may overrun the token cap a little.
func (s *Store) ReserveLLMCall(ctx context.Context, reviewID string, maxCalls int, maxTokens int64, estTokens int) error {
	var calls int
	var tokens, capCalls, capTokens int64
	var ok bool
	err := s.pool.QueryRow(ctx, `
		WITH lim AS (
			SELECT coalesce((config->'LLM'->>'MaxCallsPerReview')::int, $2) AS calls,
			       coalesce((config->'LLM'->>'MaxTokensPerReview')::bigint, $3) AS tokens
			FROM reviews WHERE id = $1
		), upd AS (
			UPDATE reviews r SET llm_calls = llm_calls + 1 FROM lim
			WHERE r.id = $1 AND (lim.calls = 0 OR r.llm_calls < lim.calls)
			  AND (lim.tokens = 0 OR r.tokens_in + r.tokens_out + $4 <= lim.tokens)
			RETURNING r.id
		)
		SELECT lim.calls, lim.tokens, r.llm_calls, r.tokens_in + r.tokens_out, EXISTS (SELECT 1 FROM upd)
		FROM lim, reviews r WHERE r.id = $1`, reviewID, maxCalls, maxTokens, estTokens).
		Scan(&capCalls, &capTokens, &calls, &tokens, &ok)
	if err != nil {
		return fmt.Errorf("reserve llm call for %s: %w", reviewID, translate(err))
	}
	if !ok {
		return fmt.Errorf("%w (review %s: %d of %d calls (llm.max_calls_per_review), %d of %d tokens (llm.max_tokens_per_review))",
			ErrBudgetExceeded, reviewID, calls, capCalls, tokens, capTokens)
	}
	return nil
}

// LLMReply is one decoded reply of a review's recorded calls.
type LLMReply struct {
	Stage, ItemKey, PromptHash, Status string
	Response                           json.RawMessage
}

// ListLLMReplies returns the replies of a review's recorded calls that
// have one, in the order the calls were made, without rebuilding their
// requests.
func (s *Store) ListLLMReplies(ctx context.Context, reviewID string) ([]LLMReply, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT c.stage, c.item_key, c.prompt_hash, c.status, coalesce(c.response, m.body)
		FROM llm_calls c LEFT JOIN llm_messages m ON m.hash = c.reply_hash
		WHERE c.review_id = $1 AND coalesce(c.response, m.body) IS NOT NULL
		ORDER BY c.id`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list llm replies of %s: %w", reviewID, err)
	}
	defer rows.Close()
	var out []LLMReply
	for rows.Next() {
		var r LLMReply
		if err := rows.Scan(&r.Stage, &r.ItemKey, &r.PromptHash, &r.Status, &r.Response); err != nil {
			return nil, fmt.Errorf("list llm replies of %s: %w", reviewID, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ListLLMCalls returns a review's recorded calls in order, with their
// request and reply bodies rebuilt from llm_messages (view llm_exchanges).
func (s *Store) ListLLMCalls(ctx context.Context, reviewID string) ([]LLMCall, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT id, stage, item_key, model, prompt_hash, status, error, tokens_in, tokens_out, latency_ms,
		       coalesce(request, 'null'), coalesce(response, 'null'), created_at, coalesce(started_at, created_at), cost, endpoint
		FROM llm_exchanges WHERE review_id = $1 ORDER BY id`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list llm calls of %s: %w", reviewID, err)
	}
	defer rows.Close()
	var out []LLMCall
	for rows.Next() {
		c := LLMCall{ReviewID: reviewID}
		var ms int
		if err := rows.Scan(&c.ID, &c.Stage, &c.ItemKey, &c.Model, &c.PromptHash, &c.Status, &c.Error,
			&c.TokensIn, &c.TokensOut, &ms, &c.Request, &c.Response, &c.CreatedAt, &c.StartedAt, &c.Cost, &c.Endpoint); err != nil {
			return nil, err
		}
		c.Latency = time.Duration(ms) * time.Millisecond
		out = append(out, c)
	}
	return out, rows.Err()
}
