package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/llmparts"
	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
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
	// Request is the request body: given to be recorded, or rebuilt from
	// its parts when read.
	Request json.RawMessage
	// RequestParts, when set, is the request already cut into its parts;
	// it is recorded instead of Request.
	RequestParts *llmparts.Request
	Response     json.RawMessage
	CreatedAt    time.Time
	// StartedAt is when the client started the request (zero: now).
	StartedAt time.Time
	// Endpoint names the pool endpoint that answered ("" when unknown).
	Endpoint string
	// Cost is the call's estimated cost in US dollars (0 when the model
	// has no price in llm.prices).
	Cost float64
}

// StartLLMCall inserts a call about to be sent, with status "started", and
// returns its row ID. Costs and analysts count it from now on; a worker
// that dies before the reply leaves it "started". The request body is
// stored as its parts in llm_messages, each once however many calls (or
// expert rounds) resend it.
func (s *Store) StartLLMCall(ctx context.Context, c LLMCall) (int64, error) {
	req, parts, err := requestParts(c.RequestParts, c.Request)
	if err != nil {
		return 0, fmt.Errorf("record started llm call: %w", err)
	}
	id, err := s.q.StartLLMCall(ctx, sqlcdb.StartLLMCallParams{
		ReviewID: nonEmpty(c.ReviewID), Stage: c.Stage, ItemKey: c.ItemKey, Model: c.Model, PromptHash: c.PromptHash,
		MessageHashes: req.messages, ParamsHash: req.params, StartedAt: nonZero(c.StartedAt), Endpoint: c.Endpoint,
		Hashes: parts.hashes, Kinds: parts.kinds, Bodies: parts.bodies,
	})
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
	reply, replyRows, err := replyPart(c.Response)
	if err != nil {
		return fmt.Errorf("record llm call: %w", err)
	}
	if c.ID != 0 {
		err = s.q.FinishLLMCall(ctx, sqlcdb.FinishLLMCallParams{
			ID: c.ID, Status: c.Status, Error: c.Error, TokensIn: i32(c.TokensIn), TokensOut: i32(c.TokensOut),
			LatencyMS: i32(c.Latency.Milliseconds()), ReplyHash: reply, Cost: c.Cost,
			Hashes: replyRows.hashes, Kinds: replyRows.kinds, Bodies: replyRows.bodies,
		})
	} else {
		// A call refused before it was sent: rare, so its parts go in
		// statements of their own.
		var (
			req     storedRequest
			reqRows partRows
		)
		if req, reqRows, err = requestParts(c.RequestParts, c.Request); err != nil {
			return fmt.Errorf("record llm call: %w", err)
		}
		for _, rows := range []partRows{reqRows, replyRows} {
			if err := s.storeParts(ctx, rows); err != nil {
				return fmt.Errorf("record llm call: %w", err)
			}
		}
		err = s.q.InsertLLMCall(ctx, sqlcdb.InsertLLMCallParams{
			ReviewID: nonEmpty(c.ReviewID), Stage: c.Stage, ItemKey: c.ItemKey, Model: c.Model, PromptHash: c.PromptHash,
			Status: c.Status, Error: c.Error, TokensIn: i32(c.TokensIn), TokensOut: i32(c.TokensOut),
			LatencyMS: i32(c.Latency.Milliseconds()), MessageHashes: req.messages, ParamsHash: req.params,
			ReplyHash: reply, StartedAt: nonZero(c.StartedAt), Cost: c.Cost, Endpoint: c.Endpoint,
		})
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
	r, err := s.q.ReserveLLMCall(ctx, sqlcdb.ReserveLLMCallParams{
		ReviewID: reviewID, MaxCalls: i32(maxCalls), MaxTokens: maxTokens, EstTokens: int64(estTokens),
	})
	if err != nil {
		return fmt.Errorf("reserve llm call for %s: %w", reviewID, translate(err))
	}
	if !r.Reserved {
		return fmt.Errorf("%w (review %s: %d of %d calls (llm.max_calls_per_review), %d of %d tokens (llm.max_tokens_per_review))",
			ErrBudgetExceeded, reviewID, r.Calls, r.CapCalls, r.Tokens, r.CapTokens)
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
	rows, err := s.q.ListLLMReplies(ctx, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list llm replies of %s: %w", reviewID, err)
	}
	var out []LLMReply
	for _, r := range rows {
		out = append(out, LLMReply{Stage: r.Stage, ItemKey: r.ItemKey, PromptHash: r.PromptHash, Status: r.Status, Response: r.Response})
	}
	return out, nil
}

// ListLLMCalls returns a review's recorded calls in order, with their
// request and reply bodies rebuilt from llm_messages (view llm_exchanges).
func (s *Store) ListLLMCalls(ctx context.Context, reviewID string) ([]LLMCall, error) {
	rows, err := s.q.ListLLMCalls(ctx, reviewID)
	if err != nil {
		return nil, fmt.Errorf("list llm calls of %s: %w", reviewID, err)
	}
	var out []LLMCall
	for _, r := range rows {
		out = append(out, LLMCall{ID: r.ID, ReviewID: reviewID, Stage: r.Stage, ItemKey: r.ItemKey, Model: r.Model,
			PromptHash: r.PromptHash, Status: r.Status, Error: r.Error, TokensIn: int(r.TokensIn),
			TokensOut: int(r.TokensOut), Latency: ms(r.LatencyMS), Request: r.Request, Response: r.Response,
			CreatedAt: r.CreatedAt, StartedAt: r.StartedAt, Cost: r.Cost, Endpoint: r.Endpoint})
	}
	return out, nil
}
