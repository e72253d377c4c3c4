package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llm"
	"github.com/reviewfleet/reviewfleet/internal/replay"
	"github.com/reviewfleet/reviewfleet/internal/untrusted"
)

func reply(text string) json.RawMessage {
	b, _ := json.Marshal(openai.ChatCompletionResponse{ID: text, Object: "chat.completion", Model: "m",
		Choices: []openai.ChatCompletionChoice{{Message: openai.ChatCompletionMessage{Role: "assistant", Content: text}, FinishReason: "stop"}}})
	return b
}

// prompt is a request whose text is fenced with a fresh random fence, as
// the stages build them.
func prompt(text string) openai.ChatCompletionRequest {
	f := untrusted.New()
	return openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: untrusted.Instructions(f)},
		{Role: "user", Content: f.Wrap("diff", text)},
	}}
}

// The same request asked twice gets its recorded replies in recorded
// order, whatever the fence ids; a request with no reply left is an error
// naming the stage and item, with no retry.
func TestServerPlaysRepliesInOrderAndNamesMisses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hash, err := llm.PromptHash(prompt("x := 1"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := replay.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Play(replay.Recording{Exchanges: []replay.Exchange{
		{Stage: "intent", Item: "a.go", Hash: hash, Status: "ok", Reply: reply("first")},
		{Stage: "intent", Item: "a.go", Hash: hash, Status: "ok", Reply: reply("second")},
	}})
	c, err := llm.New(llm.Config{BaseURL: srv.URL, APIKey: "k", MaxAttempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	meta := llm.Meta{ReviewID: "r", Stage: "intent", ItemKey: "src/a b.go#1", Model: "m"}
	for _, want := range []string{"first", "second"} {
		resp, err := c.Chat(ctx, meta, prompt("x := 1"))
		if err != nil || resp.Choices[0].Message.Content != want {
			t.Fatalf("want %q, got %+v %v", want, resp.Choices, err)
		}
	}
	_, err = c.Chat(ctx, meta, prompt("x := 1"))
	want := fmt.Sprintf("replay: no recorded reply for intent item src/a b.go#1 (request %.12s…)", hash)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "attempt 1 of 3") {
		t.Fatalf("third call: want %q, got %v", want, err)
	}
	if !errors.Is(srv.Missed(), replay.ErrNotRecorded) {
		t.Errorf("Missed() = %v", srv.Missed())
	}
	select {
	case miss := <-srv.Misses():
		if !strings.Contains(miss.Error(), "intent item src/a b.go#1") {
			t.Errorf("miss = %v", miss)
		}
	default:
		t.Error("the miss was not delivered")
	}
}
