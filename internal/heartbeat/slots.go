package heartbeat

import (
	"fmt"
	"sync"
	"time"
)

// Slots is the fleet's worker capacity: the concurrency of every live
// queue server serving any of queues, summed, from one read of asynq's
// server list (each server writes its concurrency with its heartbeat). A
// server shutting down serves no new tasks and is not counted.
func Slots(servers Servers, queues []string) (int, error) {
	list, err := servers.Servers()
	if err != nil {
		return 0, fmt.Errorf("read worker heartbeats: %w", err)
	}
	n := 0
	for _, s := range list {
		if s.Status != "active" {
			continue
		}
		for _, q := range queues {
			if _, ok := s.Queues[q]; ok {
				n += s.Concurrency
				break
			}
		}
	}
	return n, nil
}

// SlotCache remembers Slots for a while: the server list changes at most
// every Interval, and admission asks for it many times a second.
type SlotCache struct {
	Servers Servers
	Queues  []string
	// TTL is how long a read is reused (default one second).
	TTL time.Duration

	mu    sync.Mutex
	at    time.Time
	n     int
	err   error
	clock func() time.Time // tests; nil is time.Now
}

// Slots returns the fleet's worker slots, read at most once per TTL.
func (c *SlotCache) Slots() (int, error) {
	now := time.Now
	if c.clock != nil {
		now = c.clock
	}
	ttl := c.TTL
	if ttl <= 0 {
		ttl = time.Second
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && now().Sub(c.at) < ttl {
		return c.n, c.err
	}
	c.n, c.err = Slots(c.Servers, c.Queues)
	c.at = now()
	return c.n, c.err
}
