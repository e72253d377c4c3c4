package app

import (
	"net/http"

	"github.com/hibiken/asynq/x/metrics"

	fleetmetrics "github.com/reviewfleet/reviewfleet/internal/metrics"
)

// MetricsHandler serves the fleet's Prometheus metrics and asynq's queue
// metrics (sizes, pending, active, latency per queue, read from Redis on
// each scrape). With reviews set (the scheduler), it also serves
// reviewfleet_reviews{status} read from Postgres on each scrape.
func (a *App) MetricsHandler(reviews bool) http.Handler {
	var rc = fleetmetrics.NewReviewsCollector(a.Store.CountReviewsByStatus, a.Log)
	var oc = fleetmetrics.NewOutcomesCollector(a.Store.OutcomeCounts, a.Log)
	if !reviews {
		rc, oc = nil, nil
	}
	return fleetmetrics.Handler(fleetmetrics.Registry(metrics.NewQueueMetricsCollector(a.Inspector), rc, oc))
}
