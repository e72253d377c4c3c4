// Package metrics holds the fleet's Prometheus metrics, served on /metrics
// by the worker's and the scheduler's health servers. It uses the
// Prometheus client directly (not OpenTelemetry metrics bridged to
// Prometheus): the metrics are only ever scraped, and the client's
// collectors let a scrape read the queues and Postgres at that moment.
// Labels stay bounded: stages, models, statuses and reasons, never a
// review, item or worker ID.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const ns = "reviewfleet"

// Buckets of stage and wait durations: from 10ms to about 27 minutes
// (expert runs take minutes; an interactive hop tens of milliseconds).
var durationBuckets = prometheus.ExponentialBuckets(0.01, 3, 14)

var (
	// ReviewsFinished counts reviews that ended, by status (done, failed).
	ReviewsFinished = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: "reviews_finished_total",
		Help: "Reviews that ended, by final status (done, failed), counted by the process that ended them.",
	}, []string{"status"})
	// StageItems counts ledger items handled by a worker, by stage and outcome.
	StageItems = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: "stage_items_total",
		Help: "Task runs of ledger items, by stage and outcome (done, failed, skipped_budget, retry, given_back, duplicate, stale).",
	}, []string{"stage", "outcome"})
	// StageDuration observes how long a task's work took, by stage.
	StageDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: ns, Name: "stage_duration_seconds",
		Help: "Time a worker spent on one task of a stage.", Buckets: durationBuckets,
	}, []string{"stage"})
	// QueueWait observes the time from enqueue to a worker starting the task.
	QueueWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: ns, Name: "task_queue_wait_seconds",
		Help: "Time from a task's enqueue to a worker starting it, by stage.", Buckets: durationBuckets,
	}, []string{"stage"})
	// LLMCalls counts model call attempts by stage, model and status.
	LLMCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: "llm_calls_total",
		Help: "Model call attempts, by stage, model and status (ok, invalid_reply, rate_limited, error, http_NNN, budget_exceeded).",
	}, []string{"stage", "model", "status"})
	// LLMTokens counts tokens used, by stage, model and direction (input, output).
	LLMTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: "llm_tokens_total",
		Help: "Tokens used by model calls, by stage, model and direction (input, output).",
	}, []string{"stage", "model", "direction"})
	// LLMCost sums the estimated cost of model calls from llm.prices.
	LLMCost = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: "llm_cost_usd_total",
		Help: "Estimated cost in US dollars of model calls (llm.prices; 0 for unpriced models), by stage and model.",
	}, []string{"stage", "model"})
	// LimiterWait observes the time a call waited on a rate limiter.
	LimiterWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: ns, Name: "llm_limiter_wait_seconds",
		Help:    "Time a model call waited on a rate limiter, by scope (local: this worker; fleet: the shared Redis quota).",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
	}, []string{"scope"})
	// LLMRateLimited counts 429 answers of the model endpoint.
	LLMRateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: "llm_rate_limited_total",
		Help: "HTTP 429 answers of the model endpoint, by stage and model.",
	}, []string{"stage", "model"})
	// ReconcilerRestored counts ledger items the reconciler put back on a
	// queue, and stalled reviews it moved on, by reason.
	ReconcilerRestored = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: "reconciler_restored_total",
		Help: "Work the reconciler restored, by reason (missing: no queue held the task; completed or archived: the task ended with its item pending; dead_worker: the worker's heartbeat stopped; stale_lease: a task taken off a queue whose lease nobody extends; stalled_review: a review whose last task died before moving it on).",
	}, []string{"reason"})
	// ExpertToolCalls counts the expert agent's repository tool calls by
	// tool (read_file, grep, find_symbol, list_dir; other for names the
	// model invented) and outcome (hit, empty, refused, error, timeout).
	ExpertToolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Name: "expert_tool_calls_total",
		Help: "Repository tool calls of expert runs, by tool (read_file, grep, find_symbol, list_dir, other) and outcome (hit, empty, refused, error, timeout).",
	}, []string{"tool", "outcome"})
)

// Registry returns a registry with the fleet's metrics, the Go runtime and
// process collectors, and extra (such as the queue and review collectors).
func Registry(extra ...prometheus.Collector) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		ReviewsFinished, StageItems, StageDuration, QueueWait,
		LLMCalls, LLMTokens, LLMCost, LimiterWait, LLMRateLimited, ReconcilerRestored, ExpertToolCalls,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	for _, c := range extra {
		if c != nil {
			reg.MustRegister(c)
		}
	}
	return reg
}

// Handler serves reg in the Prometheus text format.
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Timeout: 10 * time.Second})
}

// Since observes the seconds since start on h (nothing for a zero start).
func Since(h prometheus.Observer, start time.Time) {
	if start.IsZero() {
		return
	}
	h.Observe(max(time.Since(start).Seconds(), 0))
}
