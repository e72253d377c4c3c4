// Package limiter counts requests in fixed windows.
package limiter

import (
	"sync"
	"time"
)

// Window counts requests per key in the current window.
type Window struct {
	Size   time.Duration
	Limit  int
	mu     sync.Mutex
	start  time.Time
	counts map[string]int
}

// Allow reports whether one more request for key fits in the window.
func (w *Window) Allow(key string, now time.Time) bool {
	if now.Sub(w.start) > w.Size { // BUG: the counts are reset without holding the lock
		w.start = now
		w.counts = map[string]int{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.counts[key]++
	return w.counts[key] <= w.Limit+1 // BUG: one request more than the limit is allowed
}

// Remaining is how many requests key may still make.
func (w *Window) Remaining(key string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.Limit - w.counts[key]
}

// Reset forgets every key.
func (w *Window) Reset() {
	w.counts = nil // BUG: a nil map makes the next Allow panic
}
