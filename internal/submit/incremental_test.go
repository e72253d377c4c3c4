package submit

import (
	"context"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// history is a store of earlier reviews held in memory.
type history struct {
	reviews  map[string]review.Review
	keys     map[string]map[string]string
	previous string
}

func (h history) PreviousReview(context.Context, string, string) (string, error) {
	return h.previous, nil
}

func (h history) GetReview(_ context.Context, id string) (review.Review, error) {
	r, ok := h.reviews[id]
	if !ok {
		return r, store.ErrNotFound
	}
	return r, nil
}

func (h history) FileResultKeys(_ context.Context, id string) (map[string]string, error) {
	return h.keys[id], nil
}

func changedFiles() []review.File {
	a, b := "package a\n", "package b\n"
	return []review.File{
		{Path: "a.go", Change: "modified", Diff: "@@ -1 +1 @@\n-x\n+package a\n", Content: &a, ChangedLines: []int{1}},
		{Path: "b.go", Change: "modified", Diff: "@@ -1 +1 @@\n-y\n+package b\n", Content: &b, ChangedLines: []int{1}},
	}
}

// A file whose key is the one the earlier review stored keeps that
// review's findings; a changed file is planned again; an earlier review
// of another repository, or one that did not finish complete, is refused.
func TestIncrementalCarriesUnchangedFilesOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := config.Default()
	newReview := func(repo string) review.NewReview {
		return review.NewReview{Repo: repo, Files: changedFiles(), Config: pipeline.Snapshot(cfg)}
	}
	nr := newReview("https://host/o/r")
	settings := reviewSettings(nr.Config)
	unchanged := FileKey(nr.Files[0], "prompts-1", settings)
	h := history{
		reviews: map[string]review.Review{
			"prev":       {ID: "prev", Repo: "https://user:token@host/o/r", Status: review.ReviewDone},
			"other":      {ID: "other", Repo: "https://host/o/elsewhere", Status: review.ReviewDone},
			"incomplete": {ID: "incomplete", Repo: "https://host/o/r", Status: review.ReviewDone, Incomplete: true},
		},
		keys: map[string]map[string]string{"prev": {"a.go": unchanged, "b.go": "a key of other contents"}},
	}
	if err := Incremental(ctx, h, cfg, Request{Since: "prev"}, &nr, "prompts-1"); err != nil {
		t.Fatal(err)
	}
	if nr.Incremental.Since != "prev" || len(nr.Incremental.Carried) != 1 || nr.Incremental.Carried[0] != "a.go" {
		t.Errorf("incremental: %+v", nr.Incremental)
	}
	if len(nr.Items) != 1 || !strings.Contains(string(nr.Items[0].Payload), "b.go") || strings.Contains(string(nr.Items[0].Payload), "a.go") {
		t.Errorf("planned %+v, want one item, of b.go only", nr.Items)
	}

	// Other prompts: nothing is carried.
	nr = newReview("https://host/o/r")
	if err := Incremental(ctx, h, cfg, Request{Since: "prev"}, &nr, "prompts-2"); err != nil || len(nr.Incremental.Carried) != 0 || len(nr.Items) != 2 {
		t.Errorf("with other prompts: carried %v, %d items, err %v", nr.Incremental.Carried, len(nr.Items), err)
	}

	for since, want := range map[string]string{"other": "cannot be built on", "incomplete": "(incomplete)", "gone": "--since"} {
		nr := newReview("https://host/o/r")
		err := Incremental(ctx, h, cfg, Request{Since: since}, &nr, "prompts-1")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("since %s: err %v, want %q", since, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "token") {
			t.Errorf("since %s: the error shows a credential: %v", since, err)
		}
	}
}

// The dedupe key follows what shapes a review's answer and nothing else:
// fleet settings and the credentials in a repository address do not
// change it; the prompts and the models do.
func TestDedupeKeyFollowsWhatShapesTheAnswer(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	nr := review.NewReview{Repo: "https://host/o/r", BaseSHA: "b1", HeadSHA: "h1", Config: pipeline.Snapshot(cfg)}
	key := DedupeKey(nr, "p")

	fleet := cfg
	fleet.Worker.Concurrency += 7
	same := nr
	same.Config = pipeline.Snapshot(fleet)
	same.Repo = "https://user:secret@host/o/r"
	if DedupeKey(same, "p") != key {
		t.Error("worker settings or the address's credentials changed the key")
	}
	if DedupeKey(nr, "q") == key {
		t.Error("other prompts kept the key")
	}
	model := cfg
	model.LLM.ExpertModel = "another-model"
	other := nr
	other.Config = pipeline.Snapshot(model)
	if DedupeKey(other, "p") == key {
		t.Error("another model kept the key")
	}
}
