package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

// record is one line of the -record file.
type record struct {
	N          int64                        `json:"n"`
	Time       time.Time                    `json:"time"`
	Schema     string                       `json:"schema,omitempty"`
	Misbehaved string                       `json:"misbehaved,omitempty"`
	Request    openai.ChatCompletionRequest `json:"request"`
}

// handler builds the reply chain the options ask for: the reviewer, then
// latency, then misbehaviours, each request recorded as it arrives. The
// returned function closes the record file. golden is the golden reviewer
// when the options ask for one.
func handler(o options, golden *llmfake.GoldenReviewer) (llmfake.Handler, func(), error) {
	var h llmfake.Handler = func(_ context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		return llmfake.FromSchema(req)
	}
	switch o.reviewer {
	case "markers":
		h = llmfake.MarkersVerdict(o.marker, o.verdict)
	case "golden":
		h = golden.Handler()
	}
	if o.latency > 0 {
		inner := h
		h = func(ctx context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
			r := inner(ctx, req)
			r.Delay += o.latency
			return r
		}
	}
	chosen, closeRecord, err := recorder(o.record)
	if err != nil {
		return nil, nil, err
	}
	h = llmfake.Misbehave(h, llmfake.MisbehaveOptions{
		Shares: o.misbehave, Always: o.always, Seed: o.seed, Slow: o.slow, Chosen: chosen,
	})
	return h, closeRecord, nil
}

// recorder returns the callback that appends each request to the file at
// path (nothing when path is empty) and a function that closes it.
func recorder(path string) (func(openai.ChatCompletionRequest, string), func(), error) {
	if path == "" {
		return nil, func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("open -record file: %w", err)
	}
	var mu sync.Mutex
	var n atomic.Int64
	enc := json.NewEncoder(f)
	write := func(req openai.ChatCompletionRequest, kind string) {
		rec := record{N: n.Add(1), Time: time.Now().UTC(), Schema: llmfake.SchemaName(req), Misbehaved: kind, Request: req}
		mu.Lock()
		defer mu.Unlock()
		if err := enc.Encode(rec); err != nil {
			fmt.Fprintln(os.Stderr, "fakellm: record:", err)
		}
	}
	closeFn := func() {
		mu.Lock()
		defer mu.Unlock()
		_ = f.Close()
	}
	return write, closeFn, nil
}
