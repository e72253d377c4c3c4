package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/store"
)

// expertRounds records the calls of an expert run of n rounds the way the
// LLM client does: round k resends the system and user messages and every
// earlier assistant turn and tool result. It returns the requests sent.
func expertRounds(t *testing.T, st *store.Store, reviewID string, n, payload int) []json.RawMessage {
	t.Helper()
	ctx := context.Background()
	// Code-like text from a fixed seed: it compresses about as well as
	// real prompts, unlike a repeated phrase.
	rng := rand.New(rand.NewPCG(uint64(payload), 7))
	words := strings.Fields("func return if err != nil ctx context.Context string int for range := map[string]any{} } { ( ) x y name path line err2 buf store review finding")
	pad := func(s string, size int) string {
		var b strings.Builder
		b.WriteString(s)
		for b.Len() < size {
			b.WriteString(" " + words[rng.IntN(len(words))])
			if rng.IntN(12) == 0 {
				fmt.Fprintf(&b, " %d\n", rng.IntN(1000))
			}
		}
		return b.String()
	}
	msgs := []map[string]any{
		{"role": "system", "content": pad("You are the expert.", payload/2)},
		{"role": "user", "content": pad("Investigate the finding.", payload)},
	}
	var reqs []json.RawMessage
	for k := 1; k <= n; k++ {
		req, _ := json.Marshal(map[string]any{"model": "m", "messages": msgs, "tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "read_file"}}}})
		assistant := map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"id": fmt.Sprint("call", k), "type": "function",
			"function": map[string]any{"name": "read_file", "arguments": fmt.Sprintf(`{"path":"a.go","start_line":%d}`, k)}}}}
		resp, _ := json.Marshal(map[string]any{"id": fmt.Sprint("r", k), "choices": []any{map[string]any{"index": 0, "message": assistant}}})
		id, err := st.StartLLMCall(ctx, store.LLMCall{ReviewID: reviewID, Stage: "expert", ItemKey: "f1", Model: "m", PromptHash: fmt.Sprint("h", k), Request: req})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.RecordLLMCall(ctx, store.LLMCall{ID: id, ReviewID: reviewID, Status: "ok", Response: resp}); err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, req)
		msgs = append(msgs, assistant, map[string]any{"role": "tool", "tool_call_id": fmt.Sprint("call", k), "content": pad("file text", payload/4)})
	}
	return reqs
}

// Every message of an expert run is stored once however many rounds resend
// it, and the calls still read back with their whole requests.
func TestExchangeMessagesStoredOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := open(t)
	id := newReview(t, st, "p1")
	const rounds = 6
	reqs := expertRounds(t, st, id, rounds, 2000)

	got, err := st.MeasureExchanges(ctx, []string{id})
	if err != nil {
		t.Fatal(err)
	}
	// system + user + an assistant turn and a tool result for each round
	// but the last, one settings part, one reply per round.
	if want := int64(2 + 2*(rounds-1) + 1 + rounds); got.Parts != want || got.InlineBytes != 0 {
		t.Fatalf("stored parts = %+v, want %d parts and nothing inline", got, want)
	}
	calls, err := st.ListLLMCalls(ctx, id)
	if err != nil || len(calls) != rounds {
		t.Fatalf("calls: %d %v", len(calls), err)
	}
	for i, c := range calls {
		if !sameJSON(t, c.Request, reqs[i]) {
			t.Errorf("round %d: request read back as %s\nwant %s", i+1, c.Request, reqs[i])
		}
		if !strings.Contains(string(c.Response), fmt.Sprintf(`"id": "r%d"`, i+1)) {
			t.Errorf("round %d: response %s", i+1, c.Response)
		}
	}
	// A request repeating a message (an expert nudge sent twice) stores
	// it once, and recording it twice adds nothing.
	twice, _ := json.Marshal(map[string]any{"model": "m", "messages": []any{
		map[string]any{"role": "user", "content": "again"}, map[string]any{"role": "user", "content": "again"}}})
	for range 2 {
		if _, err := st.StartLLMCall(ctx, store.LLMCall{ReviewID: id, Stage: "expert", ItemKey: "f2", Model: "m", PromptHash: "h", Request: twice}); err != nil {
			t.Fatalf("a request repeating a message: %v", err)
		}
	}
	if m, _ := st.MeasureExchanges(ctx, []string{id}); m.Parts != got.Parts+2 {
		t.Errorf("a repeated message: %d parts, want %d", m.Parts, got.Parts+2)
	}
	got.Parts += 2

	// A second review sending the same prompt adds only its call rows.
	other := newReview(t, st, "p1")
	expertRounds(t, st, other, 1, 2000)
	all, _ := st.MeasureExchanges(ctx, nil)
	if all.Parts != got.Parts {
		t.Errorf("a repeated prompt stored again: %d parts, want %d", all.Parts, got.Parts)
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("decode %s: %v", a, err)
	}
	_ = json.Unmarshal(b, &y)
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// TestExchangeStorageFigures prints the bytes an expert run's recording
// takes stored whole per call (as before llm_messages) and by content, for
// BENCHMARKS.md. Set REVIEWFLEET_MEASURE=1 to run it.
func TestExchangeStorageFigures(t *testing.T) {
	if os.Getenv("REVIEWFLEET_MEASURE") == "" {
		t.Skip("set REVIEWFLEET_MEASURE=1 to measure")
	}
	ctx := context.Background()
	st, conn := migratedWithConn(t)
	for _, rounds := range []int{5, 10, 20, 40} {
		id := newReview(t, st, "p1")
		expertRounds(t, st, id, rounds, 8000)
		after, err := st.MeasureExchanges(ctx, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		// The former layout: the whole request and reply in each call row
		// (jsonb, TOAST-compressed as Postgres stores it).
		table := fmt.Sprintf("whole_%d", rounds)
		if _, err := conn.Exec(ctx, `CREATE TABLE `+table+` AS SELECT request, response FROM llm_exchanges WHERE review_id = $1`, id); err != nil {
			t.Fatal(err)
		}
		var before int64
		if err := conn.QueryRow(ctx, `SELECT sum(pg_column_size(request) + pg_column_size(response)) FROM `+table).Scan(&before); err != nil {
			t.Fatal(err)
		}
		t.Logf("expert run of %2d rounds: whole bodies %8d bytes, by content %7d bytes in %3d parts (%.1fx smaller)",
			rounds, before, after.PartBytes, after.Parts, float64(before)/float64(after.PartBytes))
	}
}
