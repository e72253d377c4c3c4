package heartbeat

import (
	"errors"
	"testing"
	"time"

	"github.com/hibiken/asynq"
)

// serverList is a fixed server list that counts its reads.
type serverList struct {
	list  []*asynq.ServerInfo
	err   error
	reads int
}

func (s *serverList) Servers() ([]*asynq.ServerInfo, error) {
	s.reads++
	return s.list, s.err
}

// The fleet's slots are the concurrency of the active servers serving a
// review queue: a server stopping, or serving other queues only, adds
// none.
func TestSlotsCountActiveServersOfTheQueues(t *testing.T) {
	t.Parallel()
	servers := &serverList{list: []*asynq.ServerInfo{
		{Host: "a", PID: 1, Concurrency: 8, Status: "active", Queues: map[string]int{"reviews": 1}},
		{Host: "b", PID: 2, Concurrency: 16, Status: "active", Queues: map[string]int{"reviews": 1, "bulk": 1}},
		{Host: "c", PID: 3, Concurrency: 8, Status: "stopped", Queues: map[string]int{"reviews": 1}},
		{Host: "d", PID: 4, Concurrency: 4, Status: "active", Queues: map[string]int{"other": 1}},
	}}
	n, err := Slots(servers, []string{"reviews", "bulk"})
	if err != nil || n != 24 {
		t.Fatalf("slots %d (%v), want 8 + 16", n, err)
	}
}

// The cache reads the server list once per TTL, errors included.
func TestSlotCacheReadsOncePerTTL(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	servers := &serverList{list: []*asynq.ServerInfo{
		{Concurrency: 8, Status: "active", Queues: map[string]int{"q": 1}},
	}}
	c := &SlotCache{Servers: servers, Queues: []string{"q"}, TTL: time.Second, clock: func() time.Time { return now }}
	for range 3 {
		if n, err := c.Slots(); err != nil || n != 8 {
			t.Fatalf("slots %d (%v)", n, err)
		}
	}
	if servers.reads != 1 {
		t.Fatalf("%d reads within the TTL, want 1", servers.reads)
	}
	servers.err = errors.New("redis down")
	now = now.Add(time.Second)
	if _, err := c.Slots(); err == nil || servers.reads != 2 {
		t.Fatalf("after the TTL: err %v, %d reads; want the new read's error", err, servers.reads)
	}
}
