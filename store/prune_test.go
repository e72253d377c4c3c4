package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/store"
)

func ninetyDaysAgo() time.Time { return time.Now().Add(-90 * 24 * time.Hour) }

// Prune deletes the finished reviews older than the cut-off with all they
// hold, and the old calls made outside reviews; it leaves running and
// recent reviews, their calls, and batches that still have reviews.
func TestPruneDeletesOldFinishedReviews(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, conn := seededHistory(t)

	dry, err := st.Prune(ctx, store.PruneOptions{Before: ninetyDaysAgo(), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Reviews != 2 || dry.Findings != 6 || dry.LLMCalls != 5 {
		t.Errorf("dry run: %+v, want 2 reviews, 6 findings, 5 calls", dry)
	}
	if n := count(t, conn, `SELECT count(*) FROM reviews`); n != 4 {
		t.Fatalf("dry run deleted reviews: %d left", n)
	}

	res, err := st.Prune(ctx, store.PruneOptions{Before: ninetyDaysAgo(), BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := store.PruneResult{Reviews: 2, Findings: 6, LLMCalls: 5, Batches: 1}
	if res != want {
		t.Errorf("prune: %+v, want %+v", res, want)
	}
	for _, c := range []struct {
		sql  string
		want int64
	}{
		{`SELECT count(*) FROM reviews WHERE id IN ('` + seedOldDone + `', '` + seedOldFailed + `')`, 0},
		{`SELECT count(*) FROM reviews WHERE id IN ('` + seedOldRunning + `', '` + seedRecent + `')`, 2},
		{`SELECT count(*) FROM findings`, 4},
		{`SELECT count(*) FROM verdicts`, 4},
		{`SELECT count(*) FROM expert_runs`, 2},
		{`SELECT count(*) FROM llm_calls`, 3}, // running, recent, recent judge call
		{`SELECT count(*) FROM llm_calls WHERE review_id IS NULL`, 1},
		{`SELECT count(*) FROM review_files`, 2},
		{`SELECT count(*) FROM stage_items`, 3},
		{`SELECT count(*) FROM reports`, 1},
		{`SELECT count(*) FROM eval_summaries`, 0},
		{`SELECT count(*) FROM batches`, 0},
		{`SELECT count(*) FROM batch_reviews`, 0},
	} {
		if n := count(t, conn, c.sql); n != c.want {
			t.Errorf("%s: %d, want %d", c.sql, n, c.want)
		}
	}

	again, err := st.Prune(ctx, store.PruneOptions{Before: ninetyDaysAgo()})
	if err != nil || again != (store.PruneResult{}) {
		t.Errorf("second prune: %+v %v, want nothing left to do", again, err)
	}
}

// With KeepVerdicts the history the views read stays; the prompts, replies,
// expert transcripts and reports of old finished reviews go.
func TestPruneKeepVerdicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, conn := seededHistory(t)
	beforeHistory := count(t, conn, `SELECT count(*) FROM finding_history`)
	beforeVerdicts := count(t, conn, `SELECT count(*) FROM verdict_trail`)

	res, err := st.Prune(ctx, store.PruneOptions{Before: ninetyDaysAgo(), KeepVerdicts: true, BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := store.PruneResult{LLMCalls: 5, Reports: 2, ExpertTranscripts: 3}
	if res != want {
		t.Errorf("prune --keep-verdicts: %+v, want %+v", res, want)
	}
	if n := count(t, conn, `SELECT count(*) FROM finding_history`); n != beforeHistory {
		t.Errorf("finding_history: %d rows, had %d", n, beforeHistory)
	}
	if n := count(t, conn, `SELECT count(*) FROM verdict_trail`); n != beforeVerdicts {
		t.Errorf("verdict_trail: %d rows, had %d", n, beforeVerdicts)
	}
	if n := count(t, conn, `SELECT count(*) FROM reviews`); n != 4 {
		t.Errorf("reviews: %d, want all 4", n)
	}
	if n := count(t, conn, `SELECT count(*) FROM llm_calls WHERE review_id IN ($1, $2)`, seedOldDone, seedOldFailed); n != 0 {
		t.Errorf("%d stored calls of old reviews left", n)
	}
	if n := count(t, conn, `SELECT count(*) FROM expert_runs WHERE phases <> '[]' OR checks <> '[]'`); n != 2 {
		t.Errorf("expert transcripts left: %d, want those of the running and the recent review", n)
	}
	// The review's own counters survive for the cost questions.
	var cost float64
	if err := conn.QueryRow(ctx, `SELECT cost_usd FROM review_costs WHERE review_id = $1`, seedOldDone).Scan(&cost); err != nil || cost != 0.25 {
		t.Errorf("cost of a pruned review: %v %v, want 0.25", cost, err)
	}

	again, err := st.Prune(ctx, store.PruneOptions{Before: ninetyDaysAgo(), KeepVerdicts: true})
	if err != nil || again != (store.PruneResult{}) {
		t.Errorf("second prune: %+v %v, want nothing left to do", again, err)
	}
}

// Stored exchange parts (llm_messages) that no call refers to any more go
// with the calls; those a kept call refers to, and recent ones, stay.
func TestPruneDeletesUnusedMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, conn := seededHistory(t)
	if _, err := conn.Exec(ctx, `
		INSERT INTO llm_messages (hash, kind, body, seen_at) VALUES
		  ('shared', 'message', '{}', now() - interval '2 days'),
		  ('old-only', 'message', '{}', now() - interval '2 days'),
		  ('unused', 'message', '{}', now() - interval '2 days'),
		  ('fresh', 'message', '{}', now());
		UPDATE llm_calls SET message_hashes = ARRAY['shared'];
		UPDATE llm_calls SET message_hashes = ARRAY['shared', 'old-only'] WHERE review_id = '`+seedOldDone+`';`); err != nil {
		t.Fatal(err)
	}
	dry, err := st.Prune(ctx, store.PruneOptions{Before: ninetyDaysAgo(), DryRun: true})
	if err != nil || dry.Messages != 1 {
		t.Errorf("dry run: %+v %v, want 1 message unused now", dry, err)
	}
	res, err := st.Prune(ctx, store.PruneOptions{Before: ninetyDaysAgo(), KeepVerdicts: true, BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Messages != 2 {
		t.Errorf("prune: %+v, want the 2 unused messages deleted", res)
	}
	for hash, want := range map[string]int64{"shared": 1, "fresh": 1, "old-only": 0, "unused": 0} {
		if n := count(t, conn, `SELECT count(*) FROM llm_messages WHERE hash = $1`, hash); n != want {
			t.Errorf("message %q: %d rows, want %d", hash, n, want)
		}
	}
}

// A review still running is never pruned, however old.
func TestPruneSparesRunningReviews(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, conn := seededHistory(t)
	if _, err := st.Prune(ctx, store.PruneOptions{Before: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, conn, `SELECT count(*) FROM reviews`); n != 1 {
		t.Errorf("reviews left: %d, want only the running one", n)
	}
	if n := count(t, conn, `SELECT count(*) FROM llm_calls WHERE review_id = $1`, seedOldRunning); n != 1 {
		t.Errorf("calls of the running review: %d, want 1", n)
	}
}

// Finished webhook deliveries older than the cut-off go; open ones stay.
func TestPruneDeletesFinishedDeliveries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, conn := seededHistory(t)
	if _, err := conn.Exec(ctx, `
		INSERT INTO webhook_deliveries (id, event, status, post, received_at) VALUES
		  ('old-posted', 'pull_request', 'posted', true, now() - interval '100 days'),
		  ('old-waiting', 'pull_request', 'submitted', true, now() - interval '100 days'),
		  ('old-pending', 'pull_request', 'pending', false, now() - interval '100 days'),
		  ('new-posted', 'pull_request', 'posted', true, now())`); err != nil {
		t.Fatal(err)
	}
	res, err := st.Prune(ctx, store.PruneOptions{Before: ninetyDaysAgo()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Deliveries != 1 {
		t.Errorf("deleted %d deliveries, want 1", res.Deliveries)
	}
	if n := count(t, conn, `SELECT count(*) FROM webhook_deliveries WHERE id IN ('old-waiting', 'old-pending', 'new-posted')`); n != 3 {
		t.Errorf("%d of the open or recent deliveries left, want 3", n)
	}
}

// A finished delivery younger than the replay window stays even when the
// retention cut-off is later: its payload hash is what recognises a replay.
func TestPruneKeepsDeliveriesInReplayWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, conn := seededHistory(t)
	if _, err := conn.Exec(ctx, `
		INSERT INTO webhook_deliveries (id, event, status, post, received_at) VALUES
		  ('two-days', 'pull_request', 'posted', true, now() - interval '2 days'),
		  ('four-days', 'pull_request', 'posted', true, now() - interval '4 days')`); err != nil {
		t.Fatal(err)
	}
	res, err := st.Prune(ctx, store.PruneOptions{Before: time.Now().Add(-time.Hour), ReplayWindow: 72 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.Deliveries != 1 {
		t.Errorf("deleted %d deliveries, want 1", res.Deliveries)
	}
	if n := count(t, conn, `SELECT count(*) FROM webhook_deliveries WHERE id = 'two-days'`); n != 1 {
		t.Error("a delivery inside the replay window was pruned")
	}
}
