package snapshot

import (
	"github.com/reviewfleet/reviewfleet/internal/redact"

	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// kinds are the subdirectories of the cache that hold entries.
var kinds = []string{"repos", "trees-redacted", "reviews"}

// evictedSuffix marks an entry moved aside to be removed.
const evictedSuffix = ".evicted"

// cached is one entry as eviction sees it.
type cached struct {
	path    string
	size    int64
	lastUse time.Time
}

// Usage returns the size on disk of the cache's entries, as recorded when
// they were built or fetched into.
func (c *Cache) Usage() int64 {
	var total int64
	for _, e := range c.entries() {
		total += e.size
	}
	return total
}

// entries lists the cache's entries, least recently used first.
func (c *Cache) entries() []cached {
	var out []cached
	for _, kind := range kinds {
		locks, _ := filepath.Glob(filepath.Join(c.Dir, kind, "*"+lockSuffix))
		for _, l := range locks {
			info, err := os.Stat(l)
			if err != nil {
				continue
			}
			path := strings.TrimSuffix(l, lockSuffix)
			size, ok := recordedSize(l)
			if !ok {
				if !exists(path) {
					continue // being built, or a lock file left behind
				}
				size = diskUsage(path)
			}
			out = append(out, cached{path: path, size: size, lastUse: info.ModTime()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].lastUse.Before(out[j].lastUse) })
	return out
}

// Evict removes the least recently used entries until the cache fits in
// MaxBytes, skipping every entry a review (in any process) holds. It
// returns how many entries it removed. With MaxBytes 0 it does nothing.
func (c *Cache) Evict(ctx context.Context) int {
	sweep := c.sweep.due(time.Now())
	stale := 0
	if sweep {
		stale = c.removeStaleTrees()
	}
	if c.MaxBytes <= 0 {
		return stale
	}
	if sweep {
		c.removeEvicted()
	}
	mark := c.tally.begin()
	entries := c.entries()
	var total int64
	for _, e := range entries {
		total += e.size
	}
	removed := stale
	for _, e := range entries {
		if total <= c.MaxBytes || ctx.Err() != nil {
			break
		}
		if c.remove(e.path) {
			total -= e.size
			removed++
		}
	}
	c.tally.listed(total, mark, time.Now())
	return removed
}

// relistEvery is how long a process trusts its running count of the
// cache's size (tally) instead of listing the entries after a build. A
// listing reads every entry's lock file: after every build, a cache of
// thousands of small trees would cost more than the builds.
const relistEvery = 10 * time.Second

// tally is a process's running count of the cache's size: what its last
// listing left, plus what it has built and fetched since. A process lists
// again once it has added half the room that listing left, so two
// processes sharing the directory stay within MaxBytes between listings;
// each further one may take the cache over it by up to another half of
// that room until the next listing, at most relistEvery later while it
// builds.
type tally struct {
	mu          sync.Mutex
	added       int64     // everything this process has added, ever
	listedBytes int64     // what the last listing left the cache at
	listedAdded int64     // added when that listing began
	listAt      time.Time // zero until the first listing
}

// fits adds grown bytes to the count and reports whether the cache is
// known to have room at now without listing it.
func (t *tally) fits(grown, limit int64, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.added += grown
	since := t.added - t.listedAdded
	return !t.listAt.IsZero() && now.Sub(t.listAt) < relistEvery && 2*since <= limit-t.listedBytes
}

// begin returns the count a listing starting now compares with: what
// the process adds while the listing runs counts as added after it, even
// where the listing saw it.
func (t *tally) begin() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.added
}

// size returns what the last listing left the cache at.
func (t *tally) size() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.listedBytes
}

// listed records the size a listing that began at mark left the cache at.
func (t *tally) listed(bytes, mark int64, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.listedBytes, t.listedAdded, t.listAt = bytes, mark, at
}

// sweepEvery is how often at most Evict looks for leftovers: trees
// redacted by other rule sets and what crashed builds and removals left.
// They appear only when a process of another version shares the cache or
// one dies, so looking once a minute keeps the directory scans off every
// build, which a cache of thousands of entries would make costly.
const sweepEvery = time.Minute

// sweeps says when Evict last looked for leftovers.
type sweeps struct {
	mu   sync.Mutex
	last time.Time
}

// due reports whether a sweep is due at now, and if so records it.
func (s *sweeps) due(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.pendingAt(now) {
		return false
	}
	s.last = now
	return true
}

// pending reports whether a sweep is due at now, without recording one.
func (s *sweeps) pending(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pendingAt(now)
}

func (s *sweeps) pendingAt(now time.Time) bool {
	return s.last.IsZero() || now.Sub(s.last) >= sweepEvery
}

// evict runs Evict, after this process has added grown bytes to the
// cache, unless its running count says the cache has room and no sweep
// for leftovers is due; it logs what Evict did.
func (c *Cache) evict(ctx context.Context, grown int64) {
	now := time.Now()
	if c.MaxBytes > 0 && c.tally.fits(grown, c.MaxBytes, now) && !c.sweep.pending(now) {
		return
	}
	if n := c.Evict(ctx); n > 0 && c.Log != nil {
		c.Log.Info("snapshot cache evicted", "entries", n, "bytes", c.tally.size(), "max_bytes", c.MaxBytes)
	}
}

// remove deletes one entry if nobody holds it. The directory is renamed
// aside under the exclusive lock, so no reader finds it half deleted, and
// the lock file is removed before the lock is released, so a process that
// opened it meanwhile notices and locks the new one.
func (c *Cache) remove(path string) bool {
	lockName := path + lockSuffix
	f, err := os.OpenFile(lockName, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return false // in use
	}
	if !current(f, lockName) {
		unlock(f)
		return false
	}
	aside := path + evictedSuffix
	_ = os.RemoveAll(aside)
	if err := os.Rename(path, aside); err != nil && !errors.Is(err, os.ErrNotExist) {
		unlock(f)
		return false
	}
	_ = os.Remove(lockName)
	unlock(f)
	_ = os.RemoveAll(aside)
	return true
}

// removeStaleTrees removes the head trees redacted by other rules than
// this binary's (see treeDir) that nobody holds, whatever the size bound:
// a secret an older rule set missed must not stay on disk until the cache
// happens to fill up. It returns how many it removed.
func (c *Cache) removeStaleTrees() int {
	current := "-" + redact.RulesVersion()
	paths, _ := filepath.Glob(filepath.Join(c.Dir, "trees-redacted", "*"))
	removed := 0
	for _, p := range paths {
		name := filepath.Base(p)
		if strings.HasSuffix(name, current) || strings.HasSuffix(name, lockSuffix) ||
			strings.HasSuffix(name, evictedSuffix) || strings.Contains(name, ".redact-tmp") || strings.Contains(name, ".tmp-") {
			continue
		}
		if c.remove(p) {
			removed++
		}
	}
	return removed
}

// removeEvicted finishes removals a crash interrupted, removes trees that
// older versions cached before redaction (never served, never counted), and
// temporary trees a crashed build left behind.
func (c *Cache) removeEvicted() {
	_ = os.RemoveAll(filepath.Join(c.Dir, "trees"))
	for _, pattern := range []string{"trees-redacted/*.redact-tmp", "reviews/*.tmp"} {
		left, _ := filepath.Glob(filepath.Join(c.Dir, pattern))
		for _, p := range left {
			// A build in progress in another process is younger than this.
			if fi, err := os.Stat(p); err == nil && time.Since(fi.ModTime()) > time.Hour {
				_ = os.RemoveAll(p)
			}
		}
	}
	for _, kind := range kinds {
		left, _ := filepath.Glob(filepath.Join(c.Dir, kind, "*"+evictedSuffix))
		for _, p := range left {
			if !strings.HasSuffix(p, lockSuffix) {
				_ = os.RemoveAll(p)
			}
		}
	}
}
