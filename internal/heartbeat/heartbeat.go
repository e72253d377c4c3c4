// Package heartbeat reads a worker's liveness from asynq's own server
// heartbeats: every asynq server writes its state (host, pid, queues,
// active tasks) to Redis every 5 s with a 10 s TTL and removes it when it
// shuts down cleanly. The fleet keeps no heartbeat of its own. A worker's
// ID, recorded on the items it starts, is its process's host and pid, the
// identity asynq's server list carries, so the scheduler finds items
// whose worker died, and a submitter finds a queue nobody serves, from the
// same list.
package heartbeat

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/hibiken/asynq"
)

// Interval and TTL are asynq's: a server writes its state every Interval
// and the state lives TTL past the last write.
const (
	Interval = 5 * time.Second
	TTL      = 10 * time.Second
)

// WorkerID is the ID of this process's workers: host and pid, as asynq's
// server list names the process. Workers sharing a process (tests) share
// it; a worker stopped inside a live process gives its items back as it
// stops, so it needs no rescue.
func WorkerID() string {
	host, _ := os.Hostname()
	return serverID(host, os.Getpid())
}

func serverID(host string, pid int) string { return host + ":" + strconv.Itoa(pid) }

// Alive reports which of the workers have a live queue server, in one
// read of the server list. A worker ID no live server carries is dead:
// its process stopped beating for longer than TTL.
func Alive(servers Servers, workerIDs []string) (map[string]bool, error) {
	out := make(map[string]bool, len(workerIDs))
	if len(workerIDs) == 0 {
		return out, nil
	}
	list, err := servers.Servers()
	if err != nil {
		return nil, fmt.Errorf("read worker heartbeats: %w", err)
	}
	live := make(map[string]bool, len(list))
	for _, s := range list {
		live[serverID(s.Host, s.PID)] = true
	}
	for _, id := range workerIDs {
		out[id] = live[id]
	}
	return out, nil
}

// Servers lists the queue servers alive in Redis; *asynq.Inspector
// satisfies it.
type Servers interface {
	Servers() ([]*asynq.ServerInfo, error)
}

// NoWorker returns a one-line warning when no live worker serves queue,
// and "" when one does or the list could not be read (a submitter must
// not cry wolf over a Redis blip). asynq drops a server from its list
// within seconds of the server's last beat, so a fleet that was killed is
// seen to be gone soon too.
func NoWorker(servers Servers, queue string) string {
	list, err := servers.Servers()
	if err != nil {
		return ""
	}
	for _, s := range list {
		if _, ok := s.Queues[queue]; ok && s.Status == "active" {
			return ""
		}
	}
	if len(list) == 0 {
		return fmt.Sprintf("no live worker: nothing serves queue %s — start `reviewfleet worker` with this REDIS_URL", queue)
	}
	return fmt.Sprintf("no live worker serves queue %s (%d other servers are up) — start `reviewfleet worker` with this REDIS_URL", queue, len(list))
}
