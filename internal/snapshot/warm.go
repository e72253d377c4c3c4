package snapshot

import (
	"context"
	"sync"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// warmTimeout bounds one background build of a head tree.
const warmTimeout = 5 * time.Minute

// warming holds the trees being built by Warm in this process.
type warming struct {
	mu    sync.Mutex
	trees map[string]bool
}

// Warm starts building the review's head tree in the background, unless
// it is built or being built, so that its expert runs find it ready: on a
// large change the export and its redaction take a good part of a second,
// which would otherwise sit between the verify stage and the first expert
// call. Warm only builds; a failure is left for Acquire, which meets it
// again and decides (an error to retry, or the fallback to the changed
// files, which the review records).
func (c *Cache) Warm(r review.Review) {
	if r.SnapshotFallback != "" || r.HeadSHA == "" ||
		(r.Source != review.SourceGit && r.Source != review.SourceURL) {
		return
	}
	dest := c.treeDir(r.HeadSHA)
	if exists(dest) || !c.warm.start(dest) {
		return
	}
	go func() {
		defer c.warm.done(dest)
		ctx, cancel := context.WithTimeout(context.Background(), warmTimeout)
		defer cancel()
		release, err := c.lease(ctx, dest, func() error { return c.export(ctx, r, dest) })
		if err != nil {
			if c.Log != nil {
				c.Log.Debug("warm the head tree", "review", r.ID, "err", err)
			}
			return
		}
		release()
	}()
}

// start reports whether dest was not being built, and marks it so.
func (w *warming) start(dest string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.trees[dest] {
		return false
	}
	if w.trees == nil {
		w.trees = map[string]bool{}
	}
	w.trees[dest] = true
	return true
}

func (w *warming) done(dest string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.trees, dest)
}
