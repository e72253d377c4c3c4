package llm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"reflect"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmparts"
)

// recentBytes bounds each generation of each of a client's memories of
// what it sent lately.
const recentBytes = 16 << 20

// messagePart is a message cut for recording, and its body as it enters
// the prompt hash.
type messagePart struct {
	part llmparts.Part
	// hashed is part.Body with fence ids replaced (NormaliseFences); nil
	// when there are none.
	hashed []byte
}

// forHash is the message's body as the prompt hash reads it.
func (m messagePart) forHash() []byte {
	if m.hashed != nil {
		return m.hashed
	}
	return m.part.Body
}

// newMessageParts remembers the messages a client cut lately. Two
// messages are the same when every field is equal; the bucket hash reads
// the fields that tell most messages apart.
func newMessageParts() *recent[openai.ChatCompletionMessage, messagePart] {
	return newRecent[openai.ChatCompletionMessage, messagePart](recentBytes, func(a, b openai.ChatCompletionMessage) bool { return reflect.DeepEqual(a, b) })
}

// messageHash is the bucket of m among the remembered messages.
func messageHash(m openai.ChatCompletionMessage) uint64 {
	var h maphash.Hash
	h.SetSeed(recentSeed)
	for _, s := range []string{m.Role, m.Content, m.Name, m.ToolCallID, m.ReasoningContent} {
		h.WriteString(s)
		h.WriteByte(0)
	}
	for _, p := range m.MultiContent {
		h.WriteString(p.Text)
		h.WriteByte(0)
	}
	for _, tc := range m.ToolCalls {
		h.WriteString(tc.ID)
		h.WriteString(tc.Function.Arguments)
		h.WriteByte(0)
	}
	return h.Sum64()
}

// cutMessage encodes m canonically and hashes it.
func cutMessage(m openai.ChatCompletionMessage) (messagePart, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return messagePart{}, fmt.Errorf("encode message: %w", err)
	}
	p, err := llmparts.New(llmparts.KindMessage, raw)
	if err != nil {
		return messagePart{}, err
	}
	mp := messagePart{part: p}
	if bytes.Contains(p.Body, []byte("UNTRUSTED-")) {
		mp.hashed = NormaliseFences(p.Body)
	}
	return mp, nil
}

// cutMessages cuts every message of req, taking those cut for an earlier
// call from seen (nil: none).
func cutMessages(seen *recent[openai.ChatCompletionMessage, messagePart], msgs []openai.ChatCompletionMessage) ([]messagePart, error) {
	out := make([]messagePart, len(msgs))
	for i, m := range msgs {
		var h uint64
		if seen != nil {
			h = messageHash(m)
			if mp, ok := seen.get(h, m); ok {
				out[i] = mp
				continue
			}
		}
		mp, err := cutMessage(m)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		if seen != nil {
			// The entry holds the message's texts too, about its body's size.
			seen.put(h, m, mp, 2*len(mp.part.Body)+len(mp.hashed))
		}
		out[i] = mp
	}
	return out, nil
}

// settingsPart is what is derived from a request's fields other than its
// messages: the params part to record, and the canonical model, tools,
// tool choice and response format as the prompt hash reads them (fence ids
// replaced).
type settingsPart struct {
	params llmparts.Part
	hashed []byte
}

// newSettingsParts remembers the settings a client cut lately: a stage
// sends the same tools and schema with every call.
func newSettingsParts() *recent[openai.ChatCompletionRequest, settingsPart] {
	return newRecent[openai.ChatCompletionRequest, settingsPart](recentBytes, func(a, b openai.ChatCompletionRequest) bool { return reflect.DeepEqual(a, b) })
}

// settingsHash is the bucket of a request without its messages.
func settingsHash(req openai.ChatCompletionRequest) uint64 {
	var h maphash.Hash
	h.SetSeed(recentSeed)
	h.WriteString(req.Model)
	for _, t := range req.Tools {
		if t.Function != nil {
			h.WriteString(t.Function.Name)
		}
		h.WriteByte(0)
	}
	if rf := req.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		h.WriteString(rf.JSONSchema.Name)
	}
	return h.Sum64()
}

// cutSettings derives the settings part of req, whose messages are nil.
func cutSettings(req openai.ChatCompletionRequest) (settingsPart, error) {
	raw, err := json.Marshal(req)
	if err != nil {
		return settingsPart{}, fmt.Errorf("encode request settings: %w", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return settingsPart{}, fmt.Errorf("decode request settings: %w", err)
	}
	params, err := llmparts.Params(fields)
	if err != nil {
		return settingsPart{}, err
	}
	raw, err = json.Marshal(struct {
		Model          string                               `json:"model"`
		Tools          []openai.Tool                        `json:"tools,omitempty"`
		ToolChoice     any                                  `json:"tool_choice,omitempty"`
		ResponseFormat *openai.ChatCompletionResponseFormat `json:"response_format,omitempty"`
	}{req.Model, req.Tools, req.ToolChoice, req.ResponseFormat})
	if err != nil {
		return settingsPart{}, fmt.Errorf("encode request for hashing: %w", err)
	}
	canon, err := llmparts.Canonical(raw)
	if err != nil {
		return settingsPart{}, fmt.Errorf("canonicalise request for hashing: %w", err)
	}
	return settingsPart{params: params, hashed: NormaliseFences(canon)}, nil
}

// memory holds what a client derived from the requests it sent lately.
type memory struct {
	messages *recent[openai.ChatCompletionMessage, messagePart]
	settings *recent[openai.ChatCompletionRequest, settingsPart]
	// clean holds texts redaction left unchanged.
	clean *recent[string, struct{}]
}

func newMemory() *memory {
	return &memory{messages: newMessageParts(), settings: newSettingsParts(), clean: newCleanTexts()}
}

// cutRequest is a request cut for the prompt hash and for recording.
type cutRequest struct {
	nilMessages bool
	messages    []messagePart
	settings    settingsPart
}

// cut cuts req, taking what was cut for an earlier call from mem (nil:
// nothing is remembered).
func (mem *memory) cut(req openai.ChatCompletionRequest) (cutRequest, error) {
	var seen *recent[openai.ChatCompletionMessage, messagePart]
	if mem != nil {
		seen = mem.messages
	}
	msgs, err := cutMessages(seen, req.Messages)
	if err != nil {
		return cutRequest{}, err
	}
	out := cutRequest{nilMessages: req.Messages == nil, messages: msgs}
	req.Messages = nil
	var h uint64
	if mem != nil {
		h = settingsHash(req)
		if sp, ok := mem.settings.get(h, req); ok {
			out.settings = sp
			return out, nil
		}
	}
	if out.settings, err = cutSettings(req); err != nil {
		return cutRequest{}, err
	}
	if mem != nil {
		// The entry holds the request's tools and schema too, about the
		// size of its params body.
		mem.settings.put(h, req, out.settings, 2*len(out.settings.params.Body)+len(out.settings.hashed))
	}
	return out, nil
}

// promptHash is PromptHash of the request. The canonical form of the whole
// request has "messages" as its first key (it sorts before "model" and the
// rest), so it is assembled from the messages' canonical bodies and the
// canonical rest instead of encoding the whole request again.
func (c cutRequest) promptHash() string {
	h := sha256.New()
	h.Write([]byte(`{"messages":`))
	if c.nilMessages {
		h.Write([]byte("null"))
	} else {
		h.Write([]byte{'['})
		for i, m := range c.messages {
			if i > 0 {
				h.Write([]byte{','})
			}
			h.Write(m.forHash())
		}
		h.Write([]byte{']'})
	}
	rest := c.settings.hashed
	if len(rest) > len("{}") {
		h.Write([]byte{','})
	}
	h.Write(rest[1:])
	return hex.EncodeToString(h.Sum(nil))
}

// parts is the request as the parts it is recorded as.
func (c cutRequest) parts() *llmparts.Request {
	out := &llmparts.Request{Messages: make([]llmparts.Part, len(c.messages)), Params: c.settings.params}
	for i, m := range c.messages {
		out.Messages[i] = m.part
	}
	return out
}

// cleanKey buckets a text among the texts known to hold no secret.
func cleanKey(s string) uint64 {
	return maphash.String(recentSeed, s)
}

// newCleanTexts remembers texts redaction left unchanged.
func newCleanTexts() *recent[string, struct{}] {
	return newRecent[string, struct{}](recentBytes, func(a, b string) bool { return a == b })
}
