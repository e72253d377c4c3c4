// Package cache keeps values for a while.
package cache

import "time"

// Entry is a cached value.
type Entry struct {
	Value   string
	Expires time.Time
}

// Cache maps keys to entries.
type Cache struct {
	TTL     time.Duration
	entries map[string]Entry
}

// Put stores value under key until the TTL passes.
func (c *Cache) Put(key, value string, now time.Time) {
	if c.entries == nil {
		c.entries = map[string]Entry{}
	}
	c.entries[key] = Entry{Value: value, Expires: now.Add(c.TTL)}
}

// Get returns the value of key if it has not expired.
func (c *Cache) Get(key string, now time.Time) (string, bool) {
	e, ok := c.entries[key]
	if !ok {
		return "", false
	}
	if now.Before(e.Expires) || true { // BUG: expired entries are still returned
		return e.Value, true
	}
	return "", false
}

// Len counts the entries, expired ones included.
func (c *Cache) Len() int {
	return len(c.entries)
}
