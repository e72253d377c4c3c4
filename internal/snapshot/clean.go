package snapshot

import (
	"crypto/sha256"
	"sync"
)

// cleanFiles remembers, by a SHA-256 of their content, the files redaction
// left unchanged in this process. Whether a text holds a secret depends on
// the text and the rules alone (what earlier texts held only changes the
// markers' numbers), and the rules are fixed for the life of the process
// (redact.RulesVersion), so content found clean once is clean in every
// later tree. A repository reviewed head after head keeps nearly all its
// files: the next tree reads and hashes them instead of redacting them,
// where the per-line caches of internal/redact hold only 100,000 lines.
var cleanFiles cleanSet

// maxCleanFiles bounds cleanFiles (about 60 bytes an entry); it is emptied
// when full, like the line caches.
const maxCleanFiles = 1 << 18

// cleanSet is a bounded set of content hashes.
type cleanSet struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]struct{}
}

// has reports whether content with hash k was found clean.
func (c *cleanSet) has(k [sha256.Size]byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[k]
	return ok
}

// add remembers that content with hash k was found clean.
func (c *cleanSet) add(k [sha256.Size]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCleanFiles {
		c.m = map[[sha256.Size]byte]struct{}{}
	}
	c.m[k] = struct{}{}
}

// reset forgets every hash.
func (c *cleanSet) reset() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}
