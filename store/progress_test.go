package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
)

// An item's progress writes (its claim, the packs its prompt used, its
// calls' reservations and records) commit without waiting for the WAL flush, each
// for its own transaction only: the pooled connection that ran one is back
// to synchronous commits for whatever it runs next (an item's close).
func TestItemProgressCommitsWithoutWaitingForTheFlush(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := OpenWith(ctx, testenv.IsolatedSchema(t), PoolOptions{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	id, err := st.CreateReview(ctx, review.NewReview{Repo: "/repo", Source: "git", IntentMode: "per_file", Timeout: time.Hour,
		Files: []review.File{{Path: "a.go", Change: "modified", Diff: "@@"}},
		Items: []review.Item{{Stage: review.StageIntent, Key: "p1", Payload: json.RawMessage(`{}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	before, err := st.Setting(ctx, "synchronous_commit")
	if err != nil || before != "on" {
		t.Fatalf("synchronous_commit %q (%v) before: the test needs the server's default, on", before, err)
	}
	claim := "00000000-0000-0000-0000-000000000001"
	progress := map[string]func(tx pgx.Tx, q *sqlcdb.Queries) error{
		"claim": func(tx pgx.Tx, q *sqlcdb.Queries) error {
			_, err := q.ClaimItem(ctx, sqlcdb.ClaimItemParams{ReviewID: id, Stage: review.StageIntent, ItemKey: "p1", Claim: &claim, Generation: -1})
			return err
		},
		"packs": func(_ pgx.Tx, q *sqlcdb.Queries) error {
			return q.SetFilesPacks(ctx, sqlcdb.SetFilesPacksParams{ReviewID: id, Packs: json.RawMessage(`{"a.go": ["sql"]}`)})
		},
		"reserve": func(tx pgx.Tx, q *sqlcdb.Queries) error {
			_, err := q.ReserveLLMCall(ctx, sqlcdb.ReserveLLMCallParams{ReviewID: id})
			return err
		},
		"start": func(tx pgx.Tx, q *sqlcdb.Queries) error {
			_, err := q.StartLLMCall(ctx, sqlcdb.StartLLMCallParams{ReviewID: &id, Stage: "intent", ItemKey: "p1"})
			return err
		},
		"finish": func(tx pgx.Tx, q *sqlcdb.Queries) error {
			id, err := q.StartLLMCall(ctx, sqlcdb.StartLLMCallParams{ReviewID: &id, Stage: "intent", ItemKey: "p1"})
			if err != nil {
				return err
			}
			// Only the finish may turn it off this time.
			if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = on"); err != nil {
				return err
			}
			return q.FinishLLMCall(ctx, sqlcdb.FinishLLMCallParams{ID: id, Status: "ok"})
		},
	}
	for name, run := range progress {
		tx, err := st.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := run(tx, st.q.WithTx(tx)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var mode string
		if err := tx.QueryRow(ctx, "SHOW synchronous_commit").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		if mode != "off" {
			t.Errorf("%s: synchronous_commit %q in its transaction, want off", name, mode)
		}
	}
	// The store's own calls, each its own transaction, on the pool's one
	// connection.
	if _, err := st.ClaimItem(ctx, id, review.StageIntent, "p1", "w", -1); err != nil {
		t.Fatal(err)
	}
	if err := st.ReserveLLMCall(ctx, id, 0, 0, 10); err != nil {
		t.Fatal(err)
	}
	call, err := st.StartLLMCall(ctx, LLMCall{ReviewID: id, Stage: "intent", ItemKey: "p1", Request: json.RawMessage(`{"messages":[{"role":"user","content":"x"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RecordLLMCall(ctx, LLMCall{ID: call, Status: "ok", Response: json.RawMessage(`{"ok":true}`)}); err != nil {
		t.Fatal(err)
	}
	if after, err := st.Setting(ctx, "synchronous_commit"); err != nil || after != "on" {
		t.Fatalf("synchronous_commit %q (%v) on the connection after the progress writes, want on", after, err)
	}
}
