// Package replay runs a recorded review again without a model: a
// Recording holds what the review reviewed (its files, first-stage items,
// snapshot and configuration) and every reply the model gave, keyed by the
// prompt hash of its request; a Server answers an OpenAI-compatible client
// from it. Requests are deterministic but for the random ids of the
// untrusted-text fences, which llm.PromptHash leaves out, so the hash of a
// replayed request equals the recorded one.
package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/llm"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// Format is the version of the recording file layout.
const Format = 1

// Recording is a review's input and its model replies, as exported by
// `reviewfleet recording export`.
type Recording struct {
	Format   int    `json:"format"`
	ReviewID string `json:"review_id"`
	Review   Source `json:"review"`
	// Exchanges are the replies, in the order they were received.
	Exchanges []Exchange `json:"exchanges"`
}

// Source is what the recorded review reviewed and how: enough to create
// the same review again without its repository.
type Source struct {
	Repo          string          `json:"repo"`
	Source        review.Source   `json:"source"`
	BaseRef       string          `json:"base_ref"`
	HeadRef       string          `json:"head_ref"`
	BaseSHA       string          `json:"base_sha"`
	HeadSHA       string          `json:"head_sha"`
	Snapshot      string          `json:"snapshot"`
	Purpose       string          `json:"purpose"`
	IntentMode    string          `json:"intent_mode"`
	SkippedStages []string        `json:"skipped_stages"`
	Config        json.RawMessage `json:"config"`
	Files         []File          `json:"files"`
	Items         []Item          `json:"items"`
}

// File is one file of the recorded change (without the prompt packs its
// intent item chose: the replay chooses them again).
type File struct {
	Path         string  `json:"path"`
	OldPath      string  `json:"old_path,omitempty"`
	Change       string  `json:"change"`
	Binary       bool    `json:"binary,omitempty"`
	SkipReason   string  `json:"skip_reason,omitempty"`
	Additions    int     `json:"additions"`
	Deletions    int     `json:"deletions"`
	ChangedLines []int   `json:"changed_lines"`
	Diff         string  `json:"diff"`
	Content      *string `json:"content,omitempty"`
}

// Item is one ledger row of the review's first stage.
type Item struct {
	Stage   string          `json:"stage"`
	Key     string          `json:"key"`
	Payload json.RawMessage `json:"payload"`
}

// Exchange is one recorded reply and the request it answered.
type Exchange struct {
	Stage string `json:"stage"`
	Item  string `json:"item"`
	// Hash is the request's llm.PromptHash.
	Hash   string `json:"hash"`
	Status string `json:"status"`
	// Reply is the chat completion response body.
	Reply json.RawMessage `json:"reply"`
}

// Load reads the recording of a stored review. Calls without a decoded
// reply (refused, failed, cut off) are left out: a replay never sends
// them, because the recorded attempt that followed them succeeded.
func Load(ctx context.Context, st *store.Store, reviewID string) (Recording, error) {
	r, err := st.GetReview(ctx, reviewID)
	if err != nil {
		return Recording{}, fmt.Errorf("load the recording of review %s: %w", reviewID, err)
	}
	files, err := st.ListFiles(ctx, reviewID)
	if err != nil {
		return Recording{}, fmt.Errorf("load the recording of review %s: %w", reviewID, err)
	}
	items, err := st.ListItems(ctx, reviewID, review.StageIntent)
	if err != nil {
		return Recording{}, fmt.Errorf("load the recording of review %s: %w", reviewID, err)
	}
	calls, err := st.ListLLMReplies(ctx, reviewID)
	if err != nil {
		return Recording{}, fmt.Errorf("load the recording of review %s: %w", reviewID, err)
	}
	rec := Recording{Format: Format, ReviewID: reviewID, Review: Source{
		Repo: r.Repo, Source: r.Source, BaseRef: r.BaseRef, HeadRef: r.HeadRef, BaseSHA: r.BaseSHA, HeadSHA: r.HeadSHA,
		Snapshot: r.Snapshot, Purpose: r.Purpose, IntentMode: r.IntentMode, SkippedStages: r.SkippedStages, Config: r.Config,
	}}
	for _, f := range files {
		rec.Review.Files = append(rec.Review.Files, File{Path: f.Path, OldPath: f.OldPath, Change: f.Change, Binary: f.Binary,
			SkipReason: f.SkipReason, Additions: f.Additions, Deletions: f.Deletions, ChangedLines: f.ChangedLines,
			Diff: f.Diff, Content: f.Content})
	}
	for _, it := range items {
		rec.Review.Items = append(rec.Review.Items, Item{Stage: string(it.Stage), Key: it.Key, Payload: it.Payload})
	}
	for _, c := range calls {
		if c.Status != llm.StatusOK && c.Status != llm.StatusInvalidReply {
			continue
		}
		rec.Exchanges = append(rec.Exchanges, Exchange{Stage: c.Stage, Item: c.ItemKey, Hash: c.PromptHash, Status: c.Status, Reply: c.Response})
	}
	if len(rec.Exchanges) == 0 && r.LLMCalls > 0 {
		return rec, fmt.Errorf("review %s has no recorded replies: it ran with llm.record_exchanges off", reviewID)
	}
	return rec, nil
}

// Read decodes a recording file.
func Read(r io.Reader) (Recording, error) {
	var rec Recording
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return rec, fmt.Errorf("read recording: %w", err)
	}
	if rec.Format != Format {
		return rec, fmt.Errorf("read recording: format %d, this version reads %d", rec.Format, Format)
	}
	return rec, nil
}

// ReadFile decodes the recording file at path.
func ReadFile(path string) (Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return Recording{}, fmt.Errorf("read recording: %w", err)
	}
	defer f.Close()
	rec, err := Read(f)
	if err != nil {
		return rec, fmt.Errorf("%s: %w", path, err)
	}
	return rec, nil
}

// NewReview is the recorded review to store again: the same files, items,
// snapshot and configuration, marked as played back from a recording (the
// report says so).
func (rec Recording) NewReview() (review.NewReview, error) {
	s := rec.Review
	cfg := config.Default()
	if len(s.Config) > 0 {
		if err := json.Unmarshal(s.Config, &cfg); err != nil {
			return review.NewReview{}, fmt.Errorf("read the recorded configuration: %w", err)
		}
	}
	cfg.LLM.Recorded = true
	nr := review.NewReview{
		Repo: s.Repo, Source: s.Source, BaseRef: s.BaseRef, HeadRef: s.HeadRef, BaseSHA: s.BaseSHA, HeadSHA: s.HeadSHA,
		Snapshot: s.Snapshot, Purpose: s.Purpose, IntentMode: s.IntentMode, SkippedStages: s.SkippedStages,
		Config: pipeline.Snapshot(cfg), Timeout: cfg.Scheduler.ReviewTimeout,
	}
	for _, f := range s.Files {
		nr.Files = append(nr.Files, review.File{Path: f.Path, OldPath: f.OldPath, Change: f.Change, Binary: f.Binary,
			SkipReason: f.SkipReason, Additions: f.Additions, Deletions: f.Deletions, ChangedLines: f.ChangedLines,
			Diff: f.Diff, Content: f.Content})
	}
	for _, it := range s.Items {
		nr.Items = append(nr.Items, review.Item{Stage: review.Stage(it.Stage), Key: it.Key, Payload: it.Payload})
	}
	return nr, nil
}
