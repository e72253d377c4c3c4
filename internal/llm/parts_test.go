package llm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"

	"github.com/reviewfleet/reviewfleet/internal/llmparts"
)

// wholePromptHash is PromptHash as its documentation defines it: the
// canonical form of the whole request, encoded in one piece.
func wholePromptHash(t testing.TB, req openai.ChatCompletionRequest) string {
	t.Helper()
	raw, err := json.Marshal(struct {
		Model          string                               `json:"model"`
		Messages       []openai.ChatCompletionMessage       `json:"messages"`
		Tools          []openai.Tool                        `json:"tools,omitempty"`
		ToolChoice     any                                  `json:"tool_choice,omitempty"`
		ResponseFormat *openai.ChatCompletionResponseFormat `json:"response_format,omitempty"`
	}{req.Model, req.Messages, req.Tools, req.ToolChoice, req.ResponseFormat})
	if err != nil {
		t.Fatal(err)
	}
	canon, err := llmparts.Canonical(raw)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(NormaliseFences(canon))
	return hex.EncodeToString(sum[:])
}

// partsRequests are requests with every kind of field the hash and the
// recorded parts read.
func partsRequests() map[string]openai.ChatCompletionRequest {
	fence := "<UNTRUSTED-0123456789abcdef01234567>\n"
	schema := jsonschema.Definition{Type: jsonschema.Object, Properties: map[string]jsonschema.Definition{
		"zeta": {Type: jsonschema.String}, "alpha": {Type: jsonschema.Number, Description: "a < b & c > d"},
	}}
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "grep", Parameters: schema}}}
	conv := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You review code. Keys: é, 日本, \u2028, <tag> & \"quotes\"."},
		{Role: openai.ChatMessageRoleUser, Content: fence + "diff --git a/x b/x\n+x := 1e400\n" + fence},
		{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{ID: "call_1", Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: "grep", Arguments: `{"pattern": "x", "n": 1.50}`}}}},
		{Role: openai.ChatMessageRoleTool, ToolCallID: "call_1", Content: "x.go:1: x := 1"},
	}
	return map[string]openai.ChatCompletionRequest{
		"no messages":    {Model: "m"},
		"empty messages": {Model: "m", Messages: []openai.ChatCompletionMessage{}},
		"conversation": {Model: "m", Messages: conv, Tools: tools, ToolChoice: "auto",
			Temperature: 0.2, MaxCompletionTokens: 900, Seed: new(int)},
		"structured": {Model: "gpt-x", Messages: conv[:2], ResponseFormat: &openai.ChatCompletionResponseFormat{
			Type:       openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "reviewfleet_intent", Schema: &schema, Strict: true}}},
		"multi content": {Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", MultiContent: []openai.ChatMessagePart{
			{Type: openai.ChatMessagePartTypeText, Text: "part one " + fence}, {Type: openai.ChatMessagePartTypeText, Text: "part two"}}}}},
		"tool choice object": {Model: "m", Messages: conv[:1], Tools: tools,
			ToolChoice: openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: "grep"}}},
	}
}

// TestPromptHashIsTheWholeRequestsHash checks that the hash assembled from
// the messages' canonical bodies is the one the whole request's canonical
// form gives, with and without messages remembered from an earlier call:
// recorded replies are found by it.
func TestPromptHashIsTheWholeRequestsHash(t *testing.T) {
	t.Parallel()
	mem := newMemory()
	for name, req := range partsRequests() {
		want := wholePromptHash(t, req)
		got, err := PromptHash(req)
		if err != nil || got != want {
			t.Errorf("%s: PromptHash = %s, %v; want %s", name, got, err, want)
		}
		for round := range 2 {
			c, err := mem.cut(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.promptHash(); got != want {
				t.Errorf("%s, round %d: hash = %s; want %s", name, round, got, want)
			}
		}
	}
}

// TestRecordedPartsAreTheBodysParts checks that the parts the client cuts
// are those the store would cut from the whole request body, so a body
// rebuilt from them is the request that was sent.
func TestRecordedPartsAreTheBodysParts(t *testing.T) {
	t.Parallel()
	mem := newMemory()
	for name, req := range partsRequests() {
		body, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		want, err := llmparts.Split(body)
		if err != nil {
			t.Fatal(err)
		}
		for round := range 2 {
			c, err := mem.cut(req)
			if err != nil {
				t.Fatal(err)
			}
			got := c.parts()
			if len(got.Messages) == 0 && len(want.Messages) == 0 {
				got.Messages, want.Messages = nil, nil
			}
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("%s, round %d: parts\n%s\nwant\n%s", name, round, describeParts(*got), describeParts(want))
			}
		}
	}
}

func describeParts(r llmparts.Request) string {
	var b strings.Builder
	for _, p := range append(r.Messages, r.Params) {
		fmt.Fprintf(&b, "  %s %.12s %s\n", p.Kind, p.Hash, p.Body)
	}
	return b.String()
}

// TestRememberedPartsAreComparedWhole checks that a remembered message or
// set of settings is reused only for an equal one: two alike in every
// field the bucket hash reads still get their own parts.
func TestRememberedPartsAreComparedWhole(t *testing.T) {
	t.Parallel()
	seen := newMessageParts()
	a := openai.ChatCompletionMessage{Role: "assistant", Content: "same", FunctionCall: &openai.FunctionCall{Name: "one"}}
	b := a
	b.FunctionCall = &openai.FunctionCall{Name: "two"}
	if messageHash(a) != messageHash(b) {
		t.Fatal("the two messages should share a bucket for this test to mean anything")
	}
	for range 2 {
		msgs, err := cutMessages(seen, []openai.ChatCompletionMessage{a, b})
		if err != nil {
			t.Fatal(err)
		}
		if msgs[0].part.Hash == msgs[1].part.Hash || !bytes.Contains(msgs[1].part.Body, []byte(`"two"`)) {
			t.Fatalf("messages differing in function_call were cut as %s and %s", msgs[0].part.Body, msgs[1].part.Body)
		}
	}

	mem := newMemory()
	cold, warm := openai.ChatCompletionRequest{Model: "m", Temperature: 0}, openai.ChatCompletionRequest{Model: "m", Temperature: 0.7}
	if settingsHash(cold) != settingsHash(warm) {
		t.Fatal("the two requests should share a bucket for this test to mean anything")
	}
	for range 2 {
		for _, req := range []openai.ChatCompletionRequest{cold, warm} {
			c, err := mem.cut(req)
			if err != nil {
				t.Fatal(err)
			}
			if hot := bytes.Contains(c.settings.params.Body, []byte(`"temperature":0.7`)); hot != (req.Temperature != 0) {
				t.Fatalf("temperature %v was recorded as %s", req.Temperature, c.settings.params.Body)
			}
		}
	}
}

// TestCleanTextsAreRememberedAndSecretsAreNot checks the memory of texts
// redaction left unchanged: a text with a secret is redacted every time,
// with the markers a request without that memory would get.
func TestCleanTextsAreRememberedAndSecretsAreNot(t *testing.T) {
	t.Parallel()
	const tok = "ghp_3Tz85pkNGcVx2RHLKXSf3wh34LxCnzm8KVby"
	req := openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: "review this"},
		{Role: "user", Content: "token " + tok + " and [REDACTED:github-pat:1] already"},
		{Role: "assistant", ToolCalls: []openai.ToolCall{{Function: openai.FunctionCall{Name: "grep", Arguments: `{"pattern":"` + tok + `"}`}}}},
	}}
	clean := newCleanTexts()
	want := redactRequest(req, nil)
	for round := range 3 {
		got := redactRequest(req, clean)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: %+v\nwant %+v", round, got.Messages, want.Messages)
		}
	}
	if _, ok := clean.get(cleanKey("review this"), "review this"); !ok {
		t.Error("a clean text was not remembered")
	}
	for _, s := range []string{req.Messages[1].Content, req.Messages[2].ToolCalls[0].Function.Arguments} {
		if _, ok := clean.get(cleanKey(s), s); ok {
			t.Errorf("a text holding a secret was remembered as clean: %q", s)
		}
	}
}

// TestRecentStaysWithinItsBound checks that the memory drops the oldest
// generation once the newest is full, and keeps what is still asked for.
func TestRecentStaysWithinItsBound(t *testing.T) {
	t.Parallel()
	r := newRecent[string, int](100, func(a, b string) bool { return a == b })
	r.put(1, "kept", 1, 40)
	for i := range 20 {
		k := fmt.Sprint("k", i)
		r.put(uint64(i+10), k, i, 30)
		if _, ok := r.get(1, "kept"); !ok {
			t.Fatalf("after %d puts an entry asked for each time was dropped", i+1)
		}
	}
	if _, ok := r.get(10, "k0"); ok {
		t.Error("the first entry is still there after 20 more filled five generations")
	}
	total := 0
	for _, m := range []map[uint64][]recentEntry[string, int]{r.cur, r.old} {
		for _, es := range m {
			for _, e := range es {
				total += e.size
			}
		}
	}
	if total > 200 {
		t.Errorf("%d bytes held, want at most twice the bound of 100", total)
	}
	r.put(99, "huge", 0, 101)
	if _, ok := r.get(99, "huge"); ok {
		t.Error("a value larger than the bound was kept")
	}
}

// FuzzCutRequest checks the assembled prompt hash and the recorded parts
// against the whole request's for any texts, invalid UTF-8 and
// fence-like tags included, cut once and again from memory.
func FuzzCutRequest(f *testing.F) {
	f.Add("review <UNTRUSTED-0123456789abcdef01234567>", `{"pattern":"x"}`, "x.go:1: \xff<&>")
	f.Add("", "not json", "\u2028UNTRUSTED-0123456789abcdef0123456")
	f.Fuzz(func(t *testing.T, user, args, result string) {
		req := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleUser, Content: user},
			{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{ID: "c", Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: "grep", Arguments: args}}}},
			{Role: openai.ChatMessageRoleTool, ToolCallID: "c", Content: result},
		}}
		body, err := json.Marshal(req)
		if err != nil {
			t.Skip()
		}
		want, err := llmparts.Split(body)
		if err != nil {
			t.Fatalf("the whole body does not split: %v", err)
		}
		hash := wholePromptHash(t, req)
		mem := newMemory()
		for round := range 2 {
			c, err := mem.cut(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.promptHash(); got != hash {
				t.Fatalf("round %d: hash %s, want %s", round, got, hash)
			}
			if got := c.parts(); !reflect.DeepEqual(*got, want) {
				t.Fatalf("round %d: parts\n%s\nwant\n%s", round, describeParts(*got), describeParts(want))
			}
		}
	})
}
