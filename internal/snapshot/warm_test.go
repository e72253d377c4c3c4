package snapshot_test

import (
	"context"
	"os"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/snapshot"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
)

// A warmed head tree is built before any expert run asks for it, and the
// run then finds it; a warm-up that cannot build the tree records nothing,
// leaving the decision to the expert run.
func TestWarmBuildsTheHeadTreeAhead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	rem, _, head, r := submittedChange(t, st)

	worker := &snapshot.Cache{Dir: t.TempDir(), Store: st}
	tree := snapshot.TreeDir(worker, head)
	worker.Warm(r)
	worker.Warm(r) // while the first builds: nothing more
	snapshot.WaitWarm(worker)
	if _, err := os.Stat(tree); err != nil {
		t.Fatalf("head tree after the warm-up: %v", err)
	}
	root, release, err := worker.Acquire(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if root != tree || readAt(t, root, "README.md") != "hello\n" {
		t.Fatalf("expert run's root %s, want the warmed tree %s", root, tree)
	}

	// A head the remote no longer has: the warm-up fails quietly.
	head2 := rem.push(t, map[string]string{"lib/b.go": "package lib\n\nconst B = 2\n"})
	r2 := submitReview(t, st, &snapshot.Cache{Dir: t.TempDir()}, "file://"+rem.bare, head, head2)
	git(t, rem.bare, "update-ref", "refs/heads/main", head)
	git(t, rem.bare, "reflog", "expire", "--expire=now", "--all")
	git(t, rem.bare, "gc", "-q", "--prune=now")
	worker.Warm(r2)
	snapshot.WaitWarm(worker)
	if _, err := os.Stat(snapshot.TreeDir(worker, head2)); err == nil {
		t.Fatal("a tree was built for a head the remote does not have")
	}
	if got, err := st.GetReview(ctx, r2.ID); err != nil || got.SnapshotFallback != "" {
		t.Fatalf("the warm-up recorded a fallback: %q (%v); only an expert run decides that", got.SnapshotFallback, err)
	}
}
