package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/llm"
	"github.com/reviewfleet/reviewfleet/internal/metrics"
	"github.com/reviewfleet/reviewfleet/store"
)

// recorder stores every LLM call in llm_calls: as "started" before it is
// sent, and completed with its outcome and estimated cost after.
type recorder struct {
	st     *store.Store
	prices map[string]config.Price
}

func (r recorder) StartLLMCall(ctx context.Context, c llm.CallRecord) (int64, error) {
	return r.st.StartLLMCall(ctx, storeCall(c))
}

func (r recorder) RecordLLMCall(ctx context.Context, c llm.CallRecord) error {
	sc := storeCall(c)
	sc.Cost = CallCost(r.prices, c.Model, c.TokensIn, c.TokensOut)
	if sc.Cost > 0 {
		metrics.LLMCost.WithLabelValues(c.Stage, c.Model).Add(sc.Cost)
	}
	return r.st.RecordLLMCall(ctx, sc)
}

// CallCost is the estimated cost in US dollars of a call to model that
// used tokensIn and tokensOut, from a price table per million tokens (0
// when the model has no price).
func CallCost(prices map[string]config.Price, model string, tokensIn, tokensOut int) float64 {
	p, ok := prices[model]
	if !ok {
		return 0
	}
	return (float64(tokensIn)*p.Input + float64(tokensOut)*p.Output) / 1e6
}

func storeCall(c llm.CallRecord) store.LLMCall {
	return store.LLMCall{
		ID: c.ID, ReviewID: c.ReviewID, Stage: c.Stage, ItemKey: c.ItemKey, Model: c.Model, PromptHash: c.PromptHash,
		Status: c.Status, Error: c.Error, TokensIn: c.TokensIn, TokensOut: c.TokensOut, Latency: c.Latency,
		RequestParts: c.Request, Response: c.Response, StartedAt: c.StartedAt, Endpoint: c.Endpoint,
	}
}

// budget enforces the per-review call and token caps in Postgres, so every
// worker of the fleet sees the same spend.
type budget struct {
	st        *store.Store
	maxCalls  int
	maxTokens int64
}

func (b budget) Reserve(ctx context.Context, reviewID string, est int) error {
	if reviewID == "" {
		return nil
	}
	err := b.st.ReserveLLMCall(ctx, reviewID, b.maxCalls, b.maxTokens, est)
	if errors.Is(err, store.ErrBudgetExceeded) {
		return fmt.Errorf("%w: %v", llm.ErrBudgetExceeded, err)
	}
	return err
}

// Commit is a no-op: the recorder adds each call's tokens to the review.
func (b budget) Commit(context.Context, string, int) error { return nil }
