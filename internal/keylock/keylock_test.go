package keylock

import (
	"sync"
	"testing"
)

// Work on one key runs one at a time; other keys are not held up.
func TestLocksSerialiseAKey(t *testing.T) {
	t.Parallel()
	var l Locks
	var wg sync.WaitGroup
	inside, most := 0, 0
	var mu sync.Mutex
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock := l.Lock("k")
			defer unlock()
			mu.Lock()
			inside++
			most = max(most, inside)
			mu.Unlock()
			other := l.Lock("other") // a different key is free meanwhile
			other()
			mu.Lock()
			inside--
			mu.Unlock()
		}()
	}
	wg.Wait()
	if most != 1 {
		t.Fatalf("%d runs held key k at once, want 1", most)
	}
}
