package llm

import (
	"hash/maphash"
	"sync"
)

// recent remembers values computed for keys seen lately, within a bound
// on the bytes they take. An expert conversation resends every earlier
// message with each call; what the client derived from a message for the
// last call (its redaction, its canonical encoding) is found here instead
// of being derived again.
//
// It keeps two generations: when the current one reaches maxBytes it
// becomes the old one and the oldest is dropped, so what is in use keeps
// being found and the memory stays under twice maxBytes. Entries share a
// bucket by a hash of part of the key; same decides whether an entry is
// for the key.
type recent[K, V any] struct {
	maxBytes int
	same     func(a, b K) bool

	mu       sync.Mutex
	cur, old map[uint64][]recentEntry[K, V]
	curBytes int
}

type recentEntry[K, V any] struct {
	key  K
	val  V
	size int
}

// newRecent makes a recent bounded to about 2×maxBytes.
func newRecent[K, V any](maxBytes int, same func(a, b K) bool) *recent[K, V] {
	return &recent[K, V]{maxBytes: maxBytes, same: same}
}

// get returns the value stored for key under hash h.
func (r *recent[K, V]) get(h uint64, key K) (V, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.cur[h] {
		if r.same(e.key, key) {
			return e.val, true
		}
	}
	for _, e := range r.old[h] {
		if r.same(e.key, key) {
			r.putLocked(h, e)
			return e.val, true
		}
	}
	var zero V
	return zero, false
}

// put stores val for key under hash h, counting size bytes against the
// bound. A value larger than the bound is not kept.
func (r *recent[K, V]) put(h uint64, key K, val V, size int) {
	if size > r.maxBytes {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.putLocked(h, recentEntry[K, V]{key, val, size})
}

// putLocked adds e to the current generation, starting a new one first
// when e would take it past the bound.
func (r *recent[K, V]) putLocked(h uint64, e recentEntry[K, V]) {
	if r.cur == nil || r.curBytes+e.size > r.maxBytes {
		r.old, r.cur, r.curBytes = r.cur, map[uint64][]recentEntry[K, V]{}, 0
	}
	r.cur[h] = append(r.cur[h], e)
	r.curBytes += e.size
}

// recentSeed seeds the hashes of every recent's keys in this process.
var recentSeed = maphash.MakeSeed()
