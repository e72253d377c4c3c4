// Package keylock serialises work on the same key within one process:
// a mutex per key, made on first use.
package keylock

import "sync"

// Locks holds one mutex per key. The zero value is ready to use.
type Locks struct {
	mu sync.Mutex
	m  map[string]*sync.Mutex
}

// Lock waits for key's mutex and returns the function that releases it.
func (l *Locks) Lock(key string) (unlock func()) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*sync.Mutex{}
	}
	m, ok := l.m[key]
	if !ok {
		m = &sync.Mutex{}
		l.m[key] = m
	}
	l.mu.Unlock()
	m.Lock()
	return m.Unlock
}
