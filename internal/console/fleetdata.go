package console

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/reviewfleet/reviewfleet/internal/heartbeat"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
)

// worker is a live queue server, from its heartbeat in Redis.
type worker struct {
	Host        string
	PID         int
	Concurrency int
	Busy        int
	Status      string
	Started     time.Time
	LastSeen    *time.Time
	Queues      int
}

// queueRow is one queue's depth.
type queueRow struct {
	Stage, Priority, Name  string
	Pending, Active, Retry int
	Scheduled, Archived    int
	Paused                 bool
	Latency                time.Duration
	Missing                bool
}

// minute is one minute of the last hour.
type minute struct {
	At                          time.Time
	Reviews, Calls, RateLimited int
	Tokens                      int64
}

type fleetData struct {
	RedisError       string
	Workers          []worker
	Queues           []queueRow
	Minutes          []minute
	ReviewsHour      int
	CallsHour        int
	RateLimitedHour  int
	CallsLastMinute  int
	TokensLastMinute int64
	QuotaRPM         int
	QuotaTPM         int
	FailedReviews    []reviewRow
	FailedItems      []recentFailedItem
}

// ReviewsPerMinute and CallsPerMinute average the last hour.
func (f fleetData) ReviewsPerMinute() float64 { return float64(f.ReviewsHour) / 60 }

// CallsPerMinute averages the last hour's model calls.
func (f fleetData) CallsPerMinute() float64 { return float64(f.CallsHour) / 60 }

type recentFailedItem struct {
	ReviewID, Repo, Stage, Key, Error string
	Finished                          *time.Time
}

func (c *Console) loadFleet(ctx context.Context) (fleetData, error) {
	d := fleetData{QuotaRPM: c.opts.FleetRequestsPerMinute, QuotaTPM: c.opts.FleetTokensPerMinute}
	if c.opts.Inspector == nil {
		d.RedisError = "no Redis is configured (REDIS_URL): workers and queues cannot be shown"
	} else if err := c.loadWorkers(ctx, &d); err != nil {
		d.RedisError = err.Error()
	}
	if err := c.loadThroughput(ctx, &d); err != nil {
		return d, err
	}
	return d, c.loadFailures(ctx, &d)
}

func (c *Console) loadWorkers(ctx context.Context, d *fleetData) error {
	servers, err := c.opts.Inspector.Servers()
	if err != nil {
		return fmt.Errorf("read the workers' heartbeats: %w", err)
	}
	now := c.opts.Now()
	for _, s := range servers {
		w := worker{Host: s.Host, PID: s.PID, Concurrency: s.Concurrency, Busy: len(s.ActiveWorkers), Status: s.Status,
			Started: s.Started, Queues: len(s.Queues)}
		if c.opts.Redis != nil {
			// A server rewrites its state every heartbeat.Interval with a
			// TTL of heartbeat.TTL: what is left of the TTL says when.
			key := fmt.Sprintf("asynq:servers:{%s:%d:%s}", s.Host, s.PID, s.ID)
			if ttl, err := c.opts.Redis.PTTL(ctx, key).Result(); err == nil && ttl > 0 {
				seen := now.Add(ttl - heartbeat.TTL)
				w.LastSeen = &seen
			}
		}
		d.Workers = append(d.Workers, w)
	}
	sort.Slice(d.Workers, func(i, j int) bool {
		if d.Workers[i].Host != d.Workers[j].Host {
			return d.Workers[i].Host < d.Workers[j].Host
		}
		return d.Workers[i].PID < d.Workers[j].PID
	})
	for _, step := range pipeline.TaskSteps() {
		for _, q := range []struct{ prio, name string }{{"interactive", step.Queue}, {"bulk", step.BulkQueue}} {
			if q.name == "" {
				continue
			}
			row := queueRow{Stage: string(step.Stage), Priority: q.prio, Name: q.name}
			info, err := c.opts.Inspector.GetQueueInfo(q.name)
			switch {
			case errors.Is(err, asynq.ErrQueueNotFound) || (err != nil && strings.Contains(err.Error(), "does not exist")):
				row.Missing = true
			case err != nil:
				return fmt.Errorf("read queue %s: %w", q.name, err)
			default:
				row.Pending, row.Active, row.Retry = info.Pending, info.Active, info.Retry
				row.Scheduled, row.Archived, row.Paused, row.Latency = info.Scheduled, info.Archived, info.Paused, info.Latency
			}
			d.Queues = append(d.Queues, row)
		}
	}
	return nil
}

func (c *Console) loadThroughput(ctx context.Context, d *fleetData) error {
	now := c.opts.Now().UTC().Truncate(time.Minute)
	since := now.Add(-59 * time.Minute)
	byMinute := map[time.Time]*minute{}
	for i := 0; i < 60; i++ {
		at := since.Add(time.Duration(i) * time.Minute)
		d.Minutes = append(d.Minutes, minute{At: at})
	}
	for i := range d.Minutes {
		byMinute[d.Minutes[i].At] = &d.Minutes[i]
	}
	rows, err := c.opts.DB.Query(ctx, `
		SELECT date_trunc('minute', finished_at), count(*) FROM reviews
		WHERE finished_at >= $1 GROUP BY 1`, since)
	if err != nil {
		return fmt.Errorf("reviews per minute: %w", err)
	}
	for rows.Next() {
		var at time.Time
		var n int
		if err := rows.Scan(&at, &n); err != nil {
			rows.Close()
			return fmt.Errorf("reviews per minute: %w", err)
		}
		if m := byMinute[at.UTC()]; m != nil {
			m.Reviews = n
			d.ReviewsHour += n
		}
	}
	rows.Close()
	rows, err = c.opts.DB.Query(ctx, `
		SELECT date_trunc('minute', created_at), count(*), count(*) FILTER (WHERE status = 'rate_limited'),
		       coalesce(sum(tokens_in + tokens_out), 0)
		FROM llm_calls WHERE created_at >= $1 GROUP BY 1`, since)
	if err != nil {
		return fmt.Errorf("calls per minute: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var at time.Time
		var m minute
		if err := rows.Scan(&at, &m.Calls, &m.RateLimited, &m.Tokens); err != nil {
			return fmt.Errorf("calls per minute: %w", err)
		}
		if p := byMinute[at.UTC()]; p != nil {
			p.Calls, p.RateLimited, p.Tokens = m.Calls, m.RateLimited, m.Tokens
			d.CallsHour += m.Calls
			d.RateLimitedHour += m.RateLimited
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("calls per minute: %w", err)
	}
	last := d.Minutes[len(d.Minutes)-1]
	d.CallsLastMinute, d.TokensLastMinute = last.Calls, last.Tokens
	return nil
}

func (c *Console) loadFailures(ctx context.Context, d *fleetData) error {
	out, err := collectReviews(c.opts.DB.Query(ctx, `SELECT `+reviewRowColumns+` FROM reviews r
		WHERE r.finished_at IS NOT NULL AND r.status = 'failed' ORDER BY r.finished_at DESC LIMIT 15`))
	if err != nil {
		return fmt.Errorf("recent failed reviews: %w", err)
	}
	d.FailedReviews = out
	rows, err := c.opts.DB.Query(ctx, `
		SELECT i.review_id::text, r.repo, i.stage, i.item_key, i.error, i.finished_at
		FROM stage_items i JOIN reviews r ON r.id = i.review_id
		WHERE i.status = 'failed' AND i.finished_at IS NOT NULL ORDER BY i.finished_at DESC LIMIT 15`)
	if err != nil {
		return fmt.Errorf("recent failed items: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var f recentFailedItem
		if err := rows.Scan(&f.ReviewID, &f.Repo, &f.Stage, &f.Key, &f.Error, &f.Finished); err != nil {
			return fmt.Errorf("recent failed items: %w", err)
		}
		d.FailedItems = append(d.FailedItems, f)
	}
	return rows.Err()
}
