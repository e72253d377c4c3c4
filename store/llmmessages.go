package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
)

// Kinds of llm_messages rows.
const (
	partMessage = "message"
	partParams  = "params"
	partReply   = "reply"
)

// part is one content-addressed piece of a recorded exchange.
type part struct {
	hash, kind string
	body       []byte
}

// newPart canonicalises body (sorted keys, no insignificant whitespace)
// and hashes it.
func newPart(kind string, body []byte) (part, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return part{}, fmt.Errorf("decode %s: %w", kind, err)
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return part{}, fmt.Errorf("encode %s: %w", kind, err)
	}
	sum := sha256.Sum256(canon)
	return part{hash: hex.EncodeToString(sum[:]), kind: kind, body: canon}, nil
}

// splitRequest cuts a chat completion request body into its messages, in
// order, and the rest of it (model, tools, response format, settings).
func splitRequest(body json.RawMessage) (messages []part, params part, err error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, part{}, fmt.Errorf("decode request: %w", err)
	}
	var raw []json.RawMessage
	if m, ok := fields["messages"]; ok {
		if err := json.Unmarshal(m, &raw); err != nil {
			return nil, part{}, fmt.Errorf("decode request messages: %w", err)
		}
		delete(fields, "messages")
	}
	for _, m := range raw {
		p, err := newPart(partMessage, m)
		if err != nil {
			return nil, part{}, err
		}
		messages = append(messages, p)
	}
	rest, err := json.Marshal(fields)
	if err != nil {
		return nil, part{}, fmt.Errorf("encode request settings: %w", err)
	}
	params, err = newPart(partParams, rest)
	return messages, params, err
}

// partRows are exchange parts as the columns of llm_messages rows, each
// part once: a request may repeat a message, and one statement may not
// update a row twice.
type partRows struct {
	hashes, kinds, bodies []string
}

func newPartRows(parts []part) partRows {
	seen := make(map[string]bool, len(parts))
	var r partRows
	for _, p := range parts {
		if seen[p.hash] {
			continue
		}
		seen[p.hash] = true
		r.hashes, r.kinds, r.bodies = append(r.hashes, p.hash), append(r.kinds, p.kind), append(r.bodies, string(p.body))
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

// requestParts cuts a request body into the parts to store and how the
// call refers to them.
func requestParts(body json.RawMessage) (storedRequest, partRows, error) {
	if len(body) == 0 || !json.Valid(body) {
		return storedRequest{}, partRows{}, nil
	}
	msgs, params, err := splitRequest(body)
	if err != nil {
		return storedRequest{}, partRows{}, err
	}
	hashes := make([]string, len(msgs))
	for i, m := range msgs {
		hashes[i] = m.hash
	}
	return storedRequest{messages: hashes, params: &params.hash}, newPartRows(append(msgs, params)), nil
}

// replyPart is a reply body as the part to store and its hash (nil for
// none).
func replyPart(body json.RawMessage) (*string, partRows, error) {
	if len(body) == 0 || !json.Valid(body) {
		return nil, partRows{}, nil
	}
	p, err := newPart(partReply, body)
	if err != nil {
		return nil, partRows{}, err
	}
	return &p.hash, newPartRows([]part{p}), nil
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
