package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

var reviewsDesc = prometheus.NewDesc(ns+"_reviews", "Reviews in Postgres by status (queued, running, done, failed), read at scrape time.", []string{"status"}, nil)

// ReviewCounter counts reviews by status (store.Store.CountReviewsByStatus).
type ReviewCounter func(ctx context.Context) (map[review.ReviewStatus]int64, error)

// reviewsCollector reads the reviews gauge from Postgres on each scrape.
type reviewsCollector struct {
	count ReviewCounter
	log   *slog.Logger
}

// NewReviewsCollector serves reviewfleet_reviews{status} from count, read
// on each scrape (bounded to 5s). Only the scheduler registers it, so the
// query runs once per scrape of the fleet, not once per worker.
func NewReviewsCollector(count ReviewCounter, log *slog.Logger) prometheus.Collector {
	if log == nil {
		log = slog.Default()
	}
	return reviewsCollector{count: count, log: log}
}

func (c reviewsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- reviewsDesc }

func (c reviewsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.count(ctx)
	if err != nil {
		c.log.Warn("metrics: count reviews", "err", err)
		ch <- prometheus.NewInvalidMetric(reviewsDesc, err)
		return
	}
	for status, n := range counts {
		ch <- prometheus.MustNewConstMetric(reviewsDesc, prometheus.GaugeValue, float64(n), string(status))
	}
}
