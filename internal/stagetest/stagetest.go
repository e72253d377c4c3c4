// Package stagetest builds what stage handler tests need: an isolated
// store holding a review at a given stage, and an LLM client talking to a
// fake OpenAI-compatible server. It is imported only by tests.
package stagetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/llm"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/prompts"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

// Store opens a migrated store in a database of the test's own.
func Store(t testing.TB) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, testenv.IsolatedSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

// LLM starts a fake server answering with h and returns a client for it
// and the server (to inspect requests).
func LLM(t testing.TB, h llmfake.Handler) (*llm.Client, *llmfake.Server) {
	t.Helper()
	srv := llmfake.New(h)
	t.Cleanup(srv.Close)
	c, err := llm.New(llm.Config{BaseURL: srv.URL, APIKey: "test", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

// Prompts loads the embedded prompts.
func Prompts(t testing.TB) *prompts.Set {
	t.Helper()
	p, err := prompts.Load("")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// File is a file of a test review: its head content and changed lines.
type File struct {
	Path    string
	Content string
	Changed []int
	Diff    string
}

// Review stores a review with files and intent findings already made, sits
// it at stage `at` with one pending item per finding, and returns the
// review ID and the findings (with their IDs).
func Review(t testing.TB, st *store.Store, cfg config.Config, at review.Stage, files []File, findings []review.Finding) (string, []review.Finding) {
	t.Helper()
	ctx := context.Background()
	nr := review.NewReview{Repo: "/repo", Source: "diff", IntentMode: "per_file", Timeout: time.Hour,
		Config: pipeline.Snapshot(cfg), Items: []review.Item{{Stage: review.StageIntent, Key: "p1", Payload: json.RawMessage(`{}`)}}}
	for _, f := range files {
		c := f.Content
		nr.Files = append(nr.Files, review.File{Path: f.Path, Change: "modified", ChangedLines: f.Changed, Diff: f.Diff, Content: &c})
	}
	id, err := st.CreateReview(ctx, nr)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.FinishIntentItem(ctx, id, "p1", findings); err != nil {
		t.Fatal(err)
	}
	fs, err := st.ListFindings(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Advance(ctx, id, review.StageIntent, at, func(ctx context.Context, tx *store.Tx) ([]review.Item, error) {
		var items []review.Item
		for _, f := range fs {
			items = append(items, review.Item{Key: pipeline.FindingKey(f.ID)})
		}
		return items, nil
	}); err != nil {
		t.Fatal(err)
	}
	return id, fs
}

// Payload is the task payload of a finding's item at a stage.
func Payload(id string, stage review.Stage, f review.Finding) pipeline.Payload {
	return pipeline.Payload{ReviewID: id, Stage: stage, Item: pipeline.FindingKey(f.ID)}
}

// Job loads what the worker's handler hands a stage for payload p: the
// review, its settings and the ledger item.
func Job(t testing.TB, st *store.Store, p pipeline.Payload) pipeline.Job {
	t.Helper()
	ctx := context.Background()
	r, err := st.GetReview(ctx, p.ReviewID)
	if err != nil {
		t.Fatalf("load review %s: %v", p.ReviewID, err)
	}
	it, err := st.GetItem(ctx, p.ReviewID, p.Stage, p.Item)
	if err != nil {
		t.Fatalf("load %s item %s: %v", p.Stage, p.Item, err)
	}
	return pipeline.Job{Payload: p, Review: r, Config: pipeline.Settings(r), Item: it}
}

// Verdict returns the verdict row of a finding at a stage.
func Verdict(t testing.TB, st *store.Store, id string, findingID int64, stage review.Stage) (review.Verdict, bool) {
	t.Helper()
	vs, err := st.ListVerdicts(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.FindingID == findingID && v.Stage == stage {
			return v, true
		}
	}
	return review.Verdict{}, false
}
