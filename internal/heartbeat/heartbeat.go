// Package heartbeat keeps a worker's liveness in Redis: a key per worker
// with a short TTL, refreshed every few seconds. The scheduler reads the
// keys to find items whose worker died, so they run again within seconds
// instead of waiting for the queue's lease to expire.
package heartbeat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// KeyPrefix starts every heartbeat key; the worker ID follows.
const KeyPrefix = "reviewfleet:worker:"

// Key is the heartbeat key of a worker.
func Key(workerID string) string { return KeyPrefix + workerID }

// NewWorkerID returns an ID unique to this worker: host, process and a
// random suffix (several workers may share a process in tests).
func NewWorkerID() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Beat sets the worker's key with ttl now and every interval until ctx is
// cancelled, then deletes it (a worker that stops cleanly is not alive).
// Failures are logged and retried at the next beat.
func Beat(ctx context.Context, rdb redis.UniversalClient, workerID string, interval, ttl time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		bctx, cancel := context.WithTimeout(ctx, interval)
		err := rdb.Set(bctx, Key(workerID), time.Now().UTC().Format(time.RFC3339), ttl).Err()
		cancel()
		if err != nil && ctx.Err() == nil {
			log.Warn("worker heartbeat", "worker", workerID, "err", err)
		}
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			_ = rdb.Del(dctx, Key(workerID)).Err()
			cancel()
			return
		case <-t.C:
		}
	}
}

// Alive reports which of the workers have a heartbeat, in one round trip.
func Alive(ctx context.Context, rdb redis.UniversalClient, workerIDs []string) (map[string]bool, error) {
	out := make(map[string]bool, len(workerIDs))
	if len(workerIDs) == 0 {
		return out, nil
	}
	pipe := rdb.Pipeline()
	cmds := make([]*redis.IntCmd, len(workerIDs))
	for i, id := range workerIDs {
		cmds[i] = pipe.Exists(ctx, Key(id))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("read worker heartbeats: %w", err)
	}
	for i, id := range workerIDs {
		out[id] = cmds[i].Val() > 0
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
