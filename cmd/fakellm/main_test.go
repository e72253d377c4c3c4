package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

func TestParseFlags(t *testing.T) {
	t.Parallel()
	o, err := parseFlags([]string{"-addr", ":0", "-latency", "250ms", "-reviewer", "markers",
		"-misbehave", "429=0.1, quota=0.05,garbage=0.2", "-record", "x.jsonl", "-seed", "7", "-rpm", "600", "-expert-verdict", "inconclusive"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"429": 0.1, "quota": 0.05, "garbage": 0.2}
	if o.addr != ":0" || o.latency != 250*time.Millisecond || o.reviewer != "markers" || o.record != "x.jsonl" || o.seed != 7 ||
		o.rpm != 600 || o.verdict != "inconclusive" {
		t.Errorf("options %+v", o)
	}
	for k, v := range want {
		if o.misbehave[k] != v {
			t.Errorf("share of %s = %v, want %v (all: %v)", k, o.misbehave[k], v, o.misbehave)
		}
	}
	if len(o.misbehave) != len(want) {
		t.Errorf("shares %v, want %v", o.misbehave, want)
	}
	bad := map[string][]string{
		"unknown kind":       {"-misbehave", "teapot=0.1"},
		"share above 1":      {"-misbehave", "500=1.5"},
		"shares sum above 1": {"-misbehave", "500=0.6,401=0.5"},
		"no share":           {"-misbehave", "500"},
		"twice":              {"-misbehave", "500=0.1,500=0.2"},
		"unknown always":     {"-always", "teapot"},
		"unknown reviewer":   {"-reviewer", "oracle"},
		"golden, no dataset": {"-reviewer", "golden"},
		"dataset, no golden": {"-reviewer", "markers", "-dataset", "d"},
		"negative latency":   {"-latency", "-1s"},
		"negative quota":     {"-rpm", "-5"},
		"stray argument":     {"serve"},
		"bad duration":       {"-latency", "soon"},
	}
	for name, args := range bad {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%s: %v accepted", name, args)
		}
	}
	if _, err := parseFlags([]string{"-always", "context"}, io.Discard); err != nil {
		t.Errorf("-always context: %v", err)
	}
	if o, err := parseFlags([]string{"-reviewer", "golden", "-dataset", "ds"}, io.Discard); err != nil || o.dataset != "ds" {
		t.Errorf("-reviewer golden -dataset ds: %+v %v", o, err)
	}
	// A dataset that does not load stops the command before it serves.
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-reviewer", "golden", "-dataset", t.TempDir()}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "no case") {
		t.Errorf("golden reviewer on an empty dataset: %v", err)
	}
}

// TestQuotaThroughTheOpenAIClient checks that a spent quota looks to the
// real client the way a provider's does, and that the request is recorded.
func TestQuotaThroughTheOpenAIClient(t *testing.T) {
	t.Parallel()
	rec := filepath.Join(t.TempDir(), "calls.jsonl")
	o, err := parseFlags([]string{"-always", "quota", "-record", rec}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	h, closeRecord, err := handler(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := llmfake.StartAt("127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	cfg := openai.DefaultConfig("test")
	cfg.BaseURL = srv.URL
	client := openai.NewClientWithConfig(cfg)
	_, err = client.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "fake-model", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hello"}},
	})
	srv.Close()
	closeRecord()
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v (%T), want an *openai.APIError", err, err)
	}
	if apiErr.HTTPStatusCode != http.StatusTooManyRequests || apiErr.Code != "insufficient_quota" || apiErr.Type != "insufficient_quota" {
		t.Errorf("status %d code %v type %q, want 429 insufficient_quota", apiErr.HTTPStatusCode, apiErr.Code, apiErr.Type)
	}
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil || r.N != 1 || r.Misbehaved != "quota" || r.Request.Messages[0].Content != "hello" {
		t.Errorf("record %s: %+v %v", data, r, err)
	}
}

// TestRunServesUntilCancelled starts the command on a free port and asks it
// for a review reply from the markers reviewer.
func TestRunServesUntilCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-reviewer", "markers"}, pw, io.Discard) }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	url := line[strings.LastIndex(line, "=")+1 : len(line)-1]
	cfg := openai.DefaultConfig("test")
	cfg.BaseURL = url
	prompt := "### File: a b.go (added, +2 -0)\n\n```\n@@ new lines 1-2 @@\n   1 + package a\n   2 + x := 1 / y // BUG: y may be 0\n```\n"
	resp, err := openai.NewClientWithConfig(cfg).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "fake-model", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: prompt}},
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "reviewfleet_intent", Schema: json.RawMessage(`{"type":"object"}`)}},
	})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	got := resp.Choices[0].Message.Content
	if !strings.Contains(got, `"file":"a b.go"`) || !strings.Contains(got, `"line_start":2`) {
		t.Errorf("markers reply %s, want a finding at a b.go:2", got)
	}
}
