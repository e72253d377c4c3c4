package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// An item given back does not use its attempt, keeps the reason as its
// last error, and a review that then runs out of time names it.
func TestReturnedItemKeepsItsAttemptAndTheDeadlineNamesTheError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	id, err := st.CreateReview(ctx, review.NewReview{Repo: "r", Source: "git", IntentMode: "per_file", Timeout: -time.Second,
		Items: []review.Item{{Stage: review.StageIntent, Key: "p1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.StartItem(ctx, id, review.StageIntent, "p1"); err != nil {
		t.Fatal(err)
	}
	if err := st.ReturnItem(ctx, id, review.StageIntent, "p1", "rate limited, retry after 30s", true); err != nil {
		t.Fatal(err)
	}
	it, _ := st.GetItem(ctx, id, review.StageIntent, "p1")
	if it.Status != review.ItemPending || it.Attempts != 0 {
		t.Fatalf("item after return: %+v", it)
	}
	if _, err := st.FailExpiredReviews(ctx, id); err != nil {
		t.Fatal(err)
	}
	r, _ := st.GetReview(ctx, id)
	if r.Status != review.ReviewFailed || !strings.Contains(r.Error, "last error: rate limited, retry after 30s") {
		t.Fatalf("review: %s %q", r.Status, r.Error)
	}
	if err := st.ReturnItem(ctx, id, review.StageIntent, "nope", "x", false); !errors.Is(err, store.ErrItemClosed) {
		t.Fatalf("returning an unknown item: %v", err)
	}
}

// A call is a "started" row before its reply and the same row, completed,
// after; the review's tokens count once.
func TestLLMCallStartedThenCompleted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	id := newReview(t, st, "p1")
	began := time.Now().Add(-time.Second).UTC()
	callID, err := st.StartLLMCall(ctx, store.LLMCall{ReviewID: id, Stage: "intent", ItemKey: "p1", Model: "m", PromptHash: "h", StartedAt: began, Endpoint: "east"})
	if err != nil {
		t.Fatal(err)
	}
	calls, _ := st.ListLLMCalls(ctx, id)
	if len(calls) != 1 || calls[0].Status != store.LLMCallStarted || calls[0].ID != callID || !calls[0].StartedAt.Equal(began.Truncate(time.Microsecond)) {
		t.Fatalf("before the reply: %+v", calls)
	}
	if err := st.RecordLLMCall(ctx, store.LLMCall{ID: callID, ReviewID: id, Status: "ok", TokensIn: 100, TokensOut: 20, Latency: time.Second, Cost: 0.5}); err != nil {
		t.Fatal(err)
	}
	if err := st.FailItem(ctx, id, review.StageIntent, "p1", "x"); err != nil {
		t.Fatal(err)
	}
	calls, _ = st.ListLLMCalls(ctx, id)
	r, _ := st.GetReview(ctx, id)
	if len(calls) != 1 || calls[0].Status != "ok" || calls[0].TokensIn != 100 || r.TokensIn != 100 || r.TokensOut != 20 ||
		calls[0].Endpoint != "east" || calls[0].Cost != 0.5 || r.Cost != 0.5 {
		t.Fatalf("after the reply: %+v, review tokens %d/%d", calls, r.TokensIn, r.TokensOut)
	}
}

// A run taken back by an outage whose give-back never reached the database
// is a claim, not an attempt; the calls it left started are closed as
// abandoned when the item runs again.
func TestRerunAfterOutageCountsAClaimNotAnAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	id, err := st.CreateReview(ctx, review.NewReview{Repo: "r", Source: "git", IntentMode: "per_file", Timeout: time.Hour,
		Items: []review.Item{{Stage: review.StageIntent, Key: "p1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimItemAttempt(ctx, id, review.StageIntent, "p1", "w1", 0, time.Time{}, 1); err != nil {
		t.Fatal(err)
	}
	callID, err := st.StartLLMCall(ctx, store.LLMCall{ReviewID: id, Stage: "intent", ItemKey: "p1", Model: "m", Request: []byte(`{"messages":[]}`)})
	if err != nil {
		t.Fatal(err)
	}
	// The outage: no ReturnItem, asynq runs the task again with the same
	// retry count.
	if _, err := st.ClaimItemAttempt(ctx, id, review.StageIntent, "p1", "w2", 0, time.Time{}, 1); err != nil {
		t.Fatal(err)
	}
	it, err := st.GetItem(ctx, id, review.StageIntent, "p1")
	if err != nil || it.Attempts != 1 || it.Claims != 2 {
		t.Fatalf("item after an outage re-run: %+v %v; want 1 attempt, 2 claims", it, err)
	}
	// A counted failure, then the next attempt.
	if _, err := st.ClaimItemAttempt(ctx, id, review.StageIntent, "p1", "w2", 0, time.Time{}, 2); err != nil {
		t.Fatal(err)
	}
	if it, _ = st.GetItem(ctx, id, review.StageIntent, "p1"); it.Attempts != 2 || it.Claims != 3 {
		t.Fatalf("item after a second attempt: %+v", it)
	}
	calls, err := st.ListLLMCalls(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range calls {
		if c.ID == callID {
			found = true
			if c.Status != "abandoned" {
				t.Errorf("call of the run an outage took back: status %q, want abandoned", c.Status)
			}
		}
	}
	if !found {
		t.Fatalf("call %d not listed among %d", callID, len(calls))
	}
}
