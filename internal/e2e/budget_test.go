package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/llm"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// A call budget given at submission holds on a worker started without
// one: the review completes with the rest skipped, and its report says how
// much was skipped and which setting to raise.
func TestSubmittedBudgetHoldsOnAWorkerWithout(t *testing.T) {
	t.Parallel()
	f := newFleet(t, demo.Handler, func(c *config.Config) { c.LLM.MaxCallsPerReview, c.LLM.MaxTokensPerReview = 0, 0 })
	f.sub.Cfg.LLM.MaxCallsPerReview = 5 // the submitter's setting, kept in the review's snapshot
	r := f.review(t, demoRepo(t))
	calls, err := f.sub.Store.ListLLMCalls(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, c := range calls {
		if c.Status != llm.StatusBudgetExceeded {
			sent++
		}
	}
	if sent > 5 || r.LLMCalls > 5 {
		t.Errorf("%d calls sent (%d counted) with a budget of 5", sent, r.LLMCalls)
	}
	if r.Status != review.ReviewDone || r.SkippedBudget == 0 || !r.Incomplete {
		t.Fatalf("review %s, %d skipped for budget, incomplete %v: %s", r.Status, r.SkippedBudget, r.Incomplete, r.Error)
	}
	rep := failureReport(t, f.sub.Store, r.ID)
	if !strings.Contains(rep.Markdown, "llm.max_calls_per_review") {
		t.Errorf("the report does not say which setting to raise:\n%s", rep.Markdown)
	}
}

// A provider whose account has no quota left ends the review at once with
// its message; the fleet-wide cool-down keeps the other items from
// sending calls.
func TestProviderOutOfQuotaFailsTheReview(t *testing.T) {
	t.Parallel()
	broke := llmfake.Reply{Status: 429, Raw: `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}`}
	f := newFleet(t, llmfake.Static(broke), func(c *config.Config) { c.Worker.MaxRetry = 4 })
	r := f.review(t, demoRepo(t))
	if r.Status != review.ReviewFailed || !strings.Contains(r.Error, "exceeded your current quota") {
		t.Fatalf("status %s: %s", r.Status, r.Error)
	}
	calls, _ := f.sub.Store.ListLLMCalls(context.Background(), r.ID)
	sent := 0
	for _, c := range calls {
		if strings.HasPrefix(c.Status, "http_") {
			sent++
		}
	}
	if sent == 0 || sent > 3 {
		t.Errorf("%d calls reached the provider for 3 intent items; want each at most once", sent)
	}
}
