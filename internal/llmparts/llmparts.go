// Package llmparts cuts a recorded chat exchange into the pieces stored
// once each however many calls repeat them: every message of a request,
// the rest of the request (model, tools, settings) and the reply. A part is
// its body in canonical JSON (object keys sorted, no insignificant
// whitespace, numbers as written) and the SHA-256 of that body.
//
// The client that sends a call cuts it (it already holds each message
// encoded, and most messages of a conversation were cut for its previous
// call); the store keeps the parts and rebuilds the bodies from them.
package llmparts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Kinds of parts.
const (
	KindMessage = "message"
	KindParams  = "params"
	KindReply   = "reply"
)

// Part is one content-addressed piece of a recorded exchange.
type Part struct {
	// Hash is the hex SHA-256 of Body.
	Hash string
	// Kind is KindMessage, KindParams or KindReply.
	Kind string
	// Body is the piece in canonical JSON.
	Body []byte
}

// Request is a chat completion request as parts: its messages in order
// and the rest of it.
type Request struct {
	Messages []Part
	Params   Part
}

// New canonicalises body and hashes it as a part of kind.
func New(kind string, body []byte) (Part, error) {
	canon, err := Canonical(body)
	if err != nil {
		return Part{}, fmt.Errorf("canonicalise %s: %w", kind, err)
	}
	return Part{Hash: Hash(canon), Kind: kind, Body: canon}, nil
}

// Canonical re-encodes the JSON value raw with object keys sorted and no
// insignificant whitespace, keeping numbers exactly as written.
func Canonical(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return out, nil
}

// Hash is the hex SHA-256 of b.
func Hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Split cuts a whole chat completion request body into its messages and
// the rest of it.
func Split(body []byte) (Request, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return Request{}, fmt.Errorf("decode request: %w", err)
	}
	var req Request
	if m, ok := fields["messages"]; ok {
		var raw []json.RawMessage
		if err := json.Unmarshal(m, &raw); err != nil {
			return Request{}, fmt.Errorf("decode request messages: %w", err)
		}
		for _, m := range raw {
			p, err := New(KindMessage, m)
			if err != nil {
				return Request{}, err
			}
			req.Messages = append(req.Messages, p)
		}
	}
	params, err := Params(fields)
	if err != nil {
		return Request{}, err
	}
	req.Params = params
	return req, nil
}

// Params is the params part of a request whose top-level fields are
// fields: every one of them but "messages".
func Params(fields map[string]json.RawMessage) (Part, error) {
	rest := make(map[string]json.RawMessage, len(fields))
	for k, v := range fields {
		if k != "messages" {
			rest[k] = v
		}
	}
	raw, err := json.Marshal(rest)
	if err != nil {
		return Part{}, fmt.Errorf("encode request settings: %w", err)
	}
	return New(KindParams, raw)
}

// Hashes returns the hashes of parts, in order.
func Hashes(parts []Part) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p.Hash
	}
	return out
}
