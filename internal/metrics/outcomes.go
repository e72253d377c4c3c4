package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// outcomesHelp is the help text of reviewfleet_finding_outcomes.
const outcomesHelp = "Posted findings by outcome (resolved, dismissed, acknowledged, open; view finding_outcomes), read at scrape time. " +
	"The resolution rate (resolved of the findings on merged pull requests) is in reviewfleet quality and the view resolution_rate."

var outcomesDesc = prometheus.NewDesc(ns+"_finding_outcomes", outcomesHelp, []string{"outcome"}, nil)

// OutcomeCounter counts posted findings by outcome
// (store.Store.OutcomeCounts).
type OutcomeCounter func(ctx context.Context) (map[string]int64, error)

type outcomesCollector struct {
	count OutcomeCounter
	log   *slog.Logger
}

// NewOutcomesCollector serves reviewfleet_finding_outcomes{outcome} from
// count, read on each scrape (bounded to 5s); the scheduler registers it.
func NewOutcomesCollector(count OutcomeCounter, log *slog.Logger) prometheus.Collector {
	if log == nil {
		log = slog.Default()
	}
	return outcomesCollector{count: count, log: log}
}

func (c outcomesCollector) Describe(ch chan<- *prometheus.Desc) { ch <- outcomesDesc }

func (c outcomesCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.count(ctx)
	if err != nil {
		c.log.Warn("metrics: count finding outcomes", "err", err)
		ch <- prometheus.NewInvalidMetric(outcomesDesc, err)
		return
	}
	for outcome, n := range counts {
		ch <- prometheus.MustNewConstMetric(outcomesDesc, prometheus.GaugeValue, float64(n), outcome)
	}
}
