package llm

import (
	"context"
	"fmt"
	"sync"
)

// Budget caps what one review may spend on LLM calls, retries included.
//
// The client calls Reserve before every HTTP attempt with the attempt's
// estimated tokens; an error wrapping ErrBudgetExceeded stops the call
// before it reaches the network. After every attempt that Reserve allowed,
// the client calls Commit with the tokens actually used (0 when the attempt
// failed without a reply).
type Budget interface {
	Reserve(ctx context.Context, reviewID string, estTokens int) error
	Commit(ctx context.Context, reviewID string, tokens int) error
}

// MemoryBudget is a Budget kept in process memory, for single-process runs
// and tests. Each review may make at most MaxCalls attempts and spend at most
// MaxTokens tokens; zero means unlimited. Safe for concurrent use.
type MemoryBudget struct {
	maxCalls, maxTokens int

	mu    sync.Mutex
	spent map[string]*spend
}

type spend struct{ calls, tokens int }

// NewMemoryBudget returns a MemoryBudget with the given per-review caps.
func NewMemoryBudget(maxCalls, maxTokens int) *MemoryBudget {
	return &MemoryBudget{maxCalls: maxCalls, maxTokens: maxTokens, spent: map[string]*spend{}}
}

// Reserve counts one call for reviewID and checks that estTokens still fit.
func (b *MemoryBudget) Reserve(_ context.Context, reviewID string, estTokens int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.get(reviewID)
	if b.maxCalls > 0 && s.calls+1 > b.maxCalls {
		return fmt.Errorf("review %s: %d of %d calls used: %w", reviewID, s.calls, b.maxCalls, ErrBudgetExceeded)
	}
	if b.maxTokens > 0 && s.tokens+estTokens > b.maxTokens {
		return fmt.Errorf("review %s: %d of %d tokens used, call needs about %d: %w",
			reviewID, s.tokens, b.maxTokens, estTokens, ErrBudgetExceeded)
	}
	s.calls++
	return nil
}

// Commit adds the tokens an attempt used to reviewID's spend.
func (b *MemoryBudget) Commit(_ context.Context, reviewID string, tokens int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.get(reviewID).tokens += max(tokens, 0)
	return nil
}

// Spent returns the calls and tokens reviewID has used so far.
func (b *MemoryBudget) Spent(reviewID string) (calls, tokens int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.get(reviewID)
	return s.calls, s.tokens
}

func (b *MemoryBudget) get(reviewID string) *spend {
	s, ok := b.spent[reviewID]
	if !ok {
		s = &spend{}
		b.spent[reviewID] = s
	}
	return s
}
