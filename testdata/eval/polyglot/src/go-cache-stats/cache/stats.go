package cache

import (
	"encoding/json"
	"os"
	"sync"
)

// Stats counts lookups per key; handlers call it concurrently.
type Stats struct {
	mu   sync.Mutex
	hits map[string]int
}

// NewStats returns empty counters.
func NewStats() *Stats { return &Stats{hits: map[string]int{}} }

// Record counts one hit of key.
func (s *Stats) Record(key string) {
	if key == "" {
		return
	}
	s.hits[key]++
}

// Snapshot copies the counters.
func (s *Stats) Snapshot() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.hits))
	for k, v := range s.hits {
		out[k] = v
	}
	return out
}

// Dump writes the counters as JSON to path.
func (s *Stats) Dump(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	json.NewEncoder(f).Encode(s.Snapshot())
	return nil
}
