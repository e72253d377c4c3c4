package llmfake

import (
	"sync"
	"time"
)

// Concurrency is how many calls a server had in flight over time: from
// the moment a request was read to the moment its reply was written,
// delays included.
type Concurrency struct {
	// Peak is the most calls in flight at once.
	Peak int
	// Busy is the time at least one call was in flight.
	Busy time.Duration
	// At is the time spent with each number of calls in flight (0 left
	// out).
	At map[int]time.Duration
}

// Mean is the average number of calls in flight while any was.
func (c Concurrency) Mean() float64 {
	if c.Busy <= 0 {
		return 0
	}
	var sum float64
	for n, d := range c.At {
		sum += float64(n) * d.Seconds()
	}
	return sum / c.Busy.Seconds()
}

// ShareAtLeast is the share of the busy time with at least n calls in
// flight.
func (c Concurrency) ShareAtLeast(n int) float64 {
	if c.Busy <= 0 {
		return 0
	}
	var d time.Duration
	for k, v := range c.At {
		if k >= n {
			d += v
		}
	}
	return d.Seconds() / c.Busy.Seconds()
}

// Since is what happened after an earlier reading prev; its Peak is the
// most calls in flight for any time since.
func (c Concurrency) Since(prev Concurrency) Concurrency {
	out := Concurrency{Busy: c.Busy - prev.Busy, At: map[int]time.Duration{}}
	for n, d := range c.At {
		if rest := d - prev.At[n]; rest > 0 {
			out.At[n] = rest
			out.Peak = max(out.Peak, n)
		}
	}
	return out
}

// gauge tracks calls in flight.
type gauge struct {
	mu    sync.Mutex
	n     int
	since time.Time
	c     Concurrency
}

func (g *gauge) move(delta int) {
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.account(now)
	g.n += delta
	g.c.Peak = max(g.c.Peak, g.n)
}

// account adds the time since the last change to the current level.
func (g *gauge) account(now time.Time) {
	if g.n > 0 {
		d := now.Sub(g.since)
		if g.c.At == nil {
			g.c.At = map[int]time.Duration{}
		}
		g.c.At[g.n] += d
		g.c.Busy += d
	}
	g.since = now
}

func (g *gauge) read() Concurrency {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.account(time.Now())
	out := g.c
	out.At = make(map[int]time.Duration, len(g.c.At))
	for n, d := range g.c.At {
		out.At[n] = d
	}
	return out
}

// Concurrency returns how many calls the server had in flight so far.
func (s *Server) Concurrency() Concurrency { return s.gauge.read() }
