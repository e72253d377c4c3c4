package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/llmparts"
	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
)

// partRows are exchange parts as the columns of llm_messages rows, each
// part once: a request may repeat a message, and one statement may not
// update a row twice.
type partRows struct {
	hashes, kinds, bodies []string
}

func newPartRows(parts []llmparts.Part) partRows {
	seen := make(map[string]bool, len(parts))
	var r partRows
	for _, p := range parts {
		if seen[p.Hash] {
			continue
		}
		seen[p.Hash] = true
		r.hashes, r.kinds, r.bodies = append(r.hashes, p.Hash), append(r.kinds, p.Kind), append(r.bodies, string(p.Body))
	}
	return r
}

// storeParts inserts the parts not stored yet.
func (s *Store) storeParts(ctx context.Context, rows partRows) error {
	if len(rows.hashes) == 0 {
		return nil
	}
	if err := s.q.StoreMessages(ctx, sqlcdb.StoreMessagesParams{Hashes: rows.hashes, Kinds: rows.kinds, Bodies: rows.bodies}); err != nil {
		return fmt.Errorf("store %d exchange parts: %w", len(rows.hashes), err)
	}
	return nil
}

// CountUnreferencedMessages counts the llm_messages rows no call refers
// to and no call stored within the last grace: what prune would delete now.
func (s *Store) CountUnreferencedMessages(ctx context.Context, grace time.Duration) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, unreferencedParts+`
		SELECT count(*) FROM llm_messages m
		WHERE m.seen_at < now() - $1::interval AND NOT EXISTS (SELECT 1 FROM refs WHERE refs.hash = m.hash)`,
		interval(grace)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count unreferenced exchange parts: %w", err)
	}
	return n, nil
}

// referencedHashes selects every hash a call refers to.
const referencedHashes = `
			SELECT unnest(message_hashes) AS hash FROM llm_calls
			UNION SELECT params_hash FROM llm_calls WHERE params_hash IS NOT NULL
			UNION SELECT reply_hash FROM llm_calls WHERE reply_hash IS NOT NULL`

// unreferencedParts starts a query with refs, every hash a call refers to.
const unreferencedParts = `
		WITH refs AS (` + referencedHashes + `
		)`

// interval renders d as a Postgres interval literal.
func interval(d time.Duration) string { return fmt.Sprintf("%d milliseconds", d.Milliseconds()) }

// storedRequest is how a call refers to its request: message hashes in
// order and the hash of the rest. Both are nil for no (or an unreadable)
// request.
type storedRequest struct {
	messages []string
	params   *string
}

// requestParts is how a call refers to its request and the parts to
// store: parts as the client cut them, or else the body cut here.
func requestParts(parts *llmparts.Request, body json.RawMessage) (storedRequest, partRows, error) {
	if parts == nil {
		if len(body) == 0 || !json.Valid(body) {
			return storedRequest{}, partRows{}, nil
		}
		split, err := llmparts.Split(body)
		if err != nil {
			return storedRequest{}, partRows{}, err
		}
		parts = &split
	}
	params := parts.Params.Hash
	rows := newPartRows(append(slices.Clip(parts.Messages), parts.Params))
	return storedRequest{messages: llmparts.Hashes(parts.Messages), params: &params}, rows, nil
}

// replyPart is a reply body as the part to store and its hash (nil for
// none).
func replyPart(body json.RawMessage) (*string, partRows, error) {
	if len(body) == 0 || !json.Valid(body) {
		return nil, partRows{}, nil
	}
	p, err := llmparts.New(llmparts.KindReply, body)
	if err != nil {
		return nil, partRows{}, err
	}
	return &p.Hash, newPartRows([]llmparts.Part{p}), nil
}

// ExchangeBytes is the storage taken by the recorded exchanges of a set of
// reviews (every review when reviewIDs is empty).
type ExchangeBytes struct {
	// Parts and PartBytes count the llm_messages rows the calls refer to
	// and their bodies' size.
	Parts, PartBytes int64
	// InlineBytes is the size of request and response bodies stored in
	// the calls themselves (calls recorded before llm_messages existed).
	InlineBytes int64
}

// MeasureExchanges reports how much the recorded exchanges of reviewIDs
// take, for benchmarks and operators.
func (s *Store) MeasureExchanges(ctx context.Context, reviewIDs []string) (ExchangeBytes, error) {
	r, err := s.q.MeasureExchanges(ctx, reviewIDs)
	if err != nil {
		return ExchangeBytes{}, fmt.Errorf("measure recorded exchanges: %w", err)
	}
	return ExchangeBytes{Parts: r.Parts, PartBytes: r.PartBytes, InlineBytes: r.InlineBytes}, nil
}
