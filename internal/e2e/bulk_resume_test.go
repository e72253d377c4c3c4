package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/bulk"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/githubfake"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

// A batch submitted again from a listing that changed in between (a
// GitHub org whose pull requests were reordered, one added) recognises
// what it already submitted by what the entries review, not by their
// position: nothing is submitted twice, nothing new is skipped, and the
// new entry gets a line of its own.
func TestBulkResumeMatchesEntriesByWhatTheyReview(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := config.Default()
	cfg.DatabaseURL = testenv.IsolatedSchema(t)
	cfg.RedisURL = testenv.RedisURL(t)
	cfg.LLM.BaseURL, cfg.LLM.APIKey = "http://127.0.0.1:1/v1", "unused" // nothing runs: no worker
	cfg.Expert.SnapshotDir = t.TempDir()
	cfg.Snapshot.AllowLoopbackHTTP = true
	a, err := app.Open(ctx, cfg, app.Options{Migrate: true, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// Bulk entries name remote repositories only: these are served over
	// http on the loopback interface.
	gh := githubfake.New()
	defer gh.Close()
	var e []bulk.Entry
	for i := range 3 {
		r, err := demo.WriteRepo(ctx, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		u, err := gh.ServePublicGit("acme", fmt.Sprint("r", i), filepath.Join(r.Dir, ".git"))
		if err != nil {
			t.Skip(err)
		}
		e = append(e, bulk.Entry{Line: i + 1, Repo: u, Base: r.Base, Head: r.Head})
	}
	sub := &bulk.Submitter{Store: a.Store, Reviews: a, Concurrency: 2}
	const id = "6f1c2d9e-0000-4000-8000-000000000001"
	first, err := sub.Submit(ctx, bulk.Spec{ID: id, Name: "org", Source: "test", Entries: []bulk.Entry{e[0], e[1]}})
	if err != nil || first.New != 2 {
		t.Fatalf("first submission: %+v %v", first, err)
	}
	before, err := a.Store.BatchEntries(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// The listing now starts with a new entry and has the old ones swapped.
	again := []bulk.Entry{{Line: 1, Repo: e[2].Repo, Base: e[2].Base, Head: e[2].Head},
		{Line: 2, Repo: e[1].Repo, Base: e[1].Base, Head: e[1].Head}, {Line: 3, Repo: e[0].Repo, Base: e[0].Base, Head: e[0].Head}}
	second, err := sub.Submit(ctx, bulk.Spec{ID: id, Name: "org", Source: "test", Entries: again})
	if err != nil || second.New != 1 || second.Resumed != 2 {
		t.Fatalf("second submission: new %d resumed %d (%v), want 1 and 2", second.New, second.Resumed, err)
	}
	after, err := a.Store.BatchEntries(ctx, id)
	if err != nil || len(after) != 3 {
		t.Fatalf("entries after resuming: %d (%v), want 3", len(after), err)
	}
	byRepo := map[string]string{}
	lines := map[int]bool{}
	for _, be := range after {
		byRepo[be.Repo] = be.ReviewID
		lines[be.Line] = true
	}
	for _, be := range before {
		if byRepo[be.Repo] != be.ReviewID {
			t.Errorf("%s: review %s after resuming, was %s", be.Repo, byRepo[be.Repo], be.ReviewID)
		}
	}
	if byRepo[e[2].Repo] == "" || len(lines) != 3 {
		t.Fatalf("the new entry was not submitted on a line of its own: %+v", after)
	}
}
