package snapshot

import "time"

// TreeDir exposes where the cache keeps commit sha's redacted head tree.
func TreeDir(c *Cache, sha string) string { return c.treeDir(sha) }

// WaitWarm waits until no tree of c is being built by Warm.
func WaitWarm(c *Cache) {
	for {
		c.warm.mu.Lock()
		n := len(c.warm.trees)
		c.warm.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// SweepNow makes c's next eviction look for leftovers, as a process that
// has just started would.
func SweepNow(c *Cache) {
	c.sweep.mu.Lock()
	c.sweep.last = time.Time{}
	c.sweep.mu.Unlock()
}

// ListNow makes c's next build list the cache, as if its last listing
// were older than relistEvery.
func ListNow(c *Cache) {
	c.tally.mu.Lock()
	c.tally.listAt = time.Now().Add(-relistEvery)
	c.tally.mu.Unlock()
}

// ListedNow dates c's last listing and sweep now, so that a slow machine
// does not make its next build list the cache for their age.
func ListedNow(c *Cache) {
	now := time.Now()
	c.tally.mu.Lock()
	c.tally.listAt = now
	c.tally.mu.Unlock()
	c.sweep.mu.Lock()
	c.sweep.last = now
	c.sweep.mu.Unlock()
}
