package app

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/heartbeat"
	"github.com/reviewfleet/reviewfleet/internal/llm"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
)

// fleetCapacity tells admission what the fleet can take: the slots of the
// live workers serving the review queues, read from their heartbeats, the
// wait the provider asked of the fleet, and the backlog of calls waiting
// for the fleet's shared quota.
func (a *App) fleetCapacity() *pipeline.Capacity {
	slots := &heartbeat.SlotCache{Servers: a.Inspector, Queues: slices.Sorted(maps.Keys(pipeline.QueueWeights()))}
	return &pipeline.Capacity{
		Slots:        slots.Slots,
		ProviderWait: a.ProviderWait,
		QuotaBacklog: a.quotaBacklog,
	}
}

// ProviderWait is how long the provider still asks the fleet to wait (a
// 429, a spent quota), as the workers' limiters recorded it in Redis.
func (a *App) ProviderWait(ctx context.Context) time.Duration {
	if a.rdb == nil {
		return 0
	}
	return llm.ProviderWait(ctx, a.rdb)
}

// quotaBacklog is how long calls still wait for the fleet's shared quota
// beyond its pacing, as the workers' limiters recorded it in Redis.
func (a *App) quotaBacklog(ctx context.Context) time.Duration {
	if a.rdb == nil {
		return 0
	}
	return llm.QuotaBacklog(ctx, a.rdb)
}
