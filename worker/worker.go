// Package worker runs the asynq server that executes review tasks: one
// handler per task step of pipeline.Steps, the steps' queues with later
// steps weighted higher, rate-limited tasks retried without counting as
// failures, asynq's server heartbeat (package heartbeat) that lets the
// scheduler hand a dead worker's items to others, and a small HTTP server for the probes
// (/livez, /readyz).
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/health"
	"github.com/reviewfleet/reviewfleet/internal/heartbeat"
	"github.com/reviewfleet/reviewfleet/internal/llm"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// Handlers holds the handler of every task step of pipeline.Steps.
type Handlers map[review.Stage]pipeline.StageHandler

// Worker is one member of the fleet.
type Worker struct {
	id     string
	redis  asynq.RedisConnOpt
	srv    *asynq.Server
	srvRDB redis.UniversalClient // the asynq server's connection
	gate   *idleGate             // nil when worker.idle_poll_interval is 0
	mux    *asynq.ServeMux
	cfg    config.Worker
	health func(ctx context.Context) error
	log    *slog.Logger
	// base is the context every handler runs under; cancelBase cancels
	// the handlers still running once the shutdown grace has passed.
	base       context.Context
	cancelBase context.CancelFunc
	// running counts handlers in flight, so Run returns (and the caller
	// closes the database pool) only after the last one returned.
	running sync.WaitGroup

	mu         sync.Mutex
	healthAddr string
	metrics    http.Handler
}

// ServeMetrics serves h on /metrics of the probe server; call it before Run.
func (w *Worker) ServeMetrics(h http.Handler) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.metrics = h
}

// handlerDrainTimeout bounds how long Run waits, after cancelling them,
// for handlers to return.
const handlerDrainTimeout = 15 * time.Second

// New builds a worker serving every stage in handlers through p; health
// checks its dependencies for /readyz.
func New(redisOpt asynq.RedisConnOpt, cfg config.Worker, p *pipeline.Pipeline, handlers Handlers, health func(context.Context) error, log *slog.Logger) (*Worker, error) {
	if log == nil {
		log = slog.Default()
	}
	w := &Worker{id: heartbeat.WorkerID(), redis: redisOpt, cfg: cfg, health: health, log: log}
	w.base, w.cancelBase = context.WithCancel(context.Background())
	mux := asynq.NewServeMux()
	mux.Use(w.track, tracing(otel.Tracer("reviewfleet/worker"), p.TaskTrace))
	for st := range handlers {
		if s, ok := pipeline.StepOf(st); !ok || s.Kind != pipeline.KindTask {
			w.cancelBase()
			return nil, fmt.Errorf("a handler for %q, which is no task step of the pipeline", st)
		}
	}
	for _, s := range pipeline.TaskSteps() {
		h, ok := handlers[s.Stage]
		if !ok || h == nil {
			w.cancelBase()
			return nil, fmt.Errorf("no handler for stage %s", s.Stage)
		}
		mux.Handle(s.Type, p.WorkerHandler(w.id, h))
	}
	srvRDB, ok := redisOpt.MakeRedisClient().(redis.UniversalClient)
	if !ok {
		w.cancelBase()
		return nil, errors.New("worker: unsupported redis connection")
	}
	w.srvRDB = srvRDB
	queues := pipeline.QueueWeights()
	if cfg.IdlePollInterval > 0 {
		w.gate = newIdleGate(len(queues), cfg.IdlePollInterval)
		srvRDB.AddHook(w.gate)
	}
	w.srv = asynq.NewServerFromRedisClient(srvRDB, asynq.Config{
		Concurrency:       cfg.Concurrency,
		BaseContext:       func() context.Context { return w.base },
		Queues:            queues,
		TaskCheckInterval: cfg.TaskCheckInterval,
		// Retries and rate-limited tasks wait in asynq's scheduled set; the
		// default 5s sweep would add up to 5s to every retry.
		DelayedTaskCheckInterval: time.Second,
		ShutdownTimeout:          cfg.ShutdownTimeout,
		// Only an item's own faults use up its attempts: rate limits,
		// cancellation and outages do not (pipeline.Classify).
		IsFailure: pipeline.IsFailure,
		RetryDelayFunc: func(n int, err error, _ *asynq.Task) time.Duration {
			return pipeline.RetryDelay(n, err, llm.IsRateLimited)
		},
		ErrorHandler: asynq.ErrorHandlerFunc(func(ctx context.Context, t *asynq.Task, err error) {
			logTaskError(log, t, err)
		}),
		Logger:   asynqLogger{log},
		LogLevel: asynq.WarnLevel,
	})
	w.mux = mux
	return w, nil
}

// ID is the worker's identity in the ledger: its process's entry in
// asynq's server list (heartbeat.WorkerID).
func (w *Worker) ID() string { return w.id }

// HealthAddr is the address the probes are served on once Run started
// ("" when disabled or not yet listening).
func (w *Worker) HealthAddr() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.healthAddr
}

// track counts the handler in flight for Run's drain.
func (w *Worker) track(next asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		w.running.Add(1)
		defer w.running.Done()
		return next.ProcessTask(ctx, t)
	})
}

// Run serves tasks until ctx is cancelled, then shuts down gracefully:
// in-flight tasks get ShutdownTimeout to finish; asynq puts the rest back
// on their queues, and their handlers are cancelled — they give their
// items back without failing them or using an attempt. Run returns only
// after the handlers did (or a further drain timeout passed), so the
// caller may close the database pool. asynq's heartbeat stops with the
// server; the tasks it put back are queued, so the rescue leaves their
// items to the queue while the handlers give them back.
func (w *Worker) Run(ctx context.Context) error {
	rdb, ok := w.redis.MakeRedisClient().(redis.UniversalClient)
	if !ok {
		return errors.New("worker: unsupported redis connection")
	}
	defer rdb.Close()
	defer w.srvRDB.Close() // asynq does not close a connection it was given
	defer w.drain()
	if w.gate != nil {
		defer w.gate.Close()
		lctx, stopListen := context.WithCancel(context.Background())
		listening := make(chan struct{})
		go func() { defer close(listening); w.listenForTasks(lctx, rdb) }()
		defer func() { stopListen(); <-listening }()
	}

	if err := w.srv.Start(w.mux); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	if w.cfg.HealthAddr != "" {
		w.mu.Lock()
		mh := w.metrics
		w.mu.Unlock()
		hs, err := health.StartWithMetrics(w.cfg.HealthAddr, w.cfg.HealthAddr == config.DefaultHealthAddr, w.health, mh, w.log)
		if err != nil {
			w.srv.Shutdown()
			return err
		}
		defer hs.Stop()
		w.mu.Lock()
		w.healthAddr = hs.Addr()
		w.mu.Unlock()
	}
	<-ctx.Done()
	if w.gate != nil {
		w.gate.Close()
	}
	w.srv.Shutdown()
	return nil
}

// listenForTasks wakes the idle gate whenever tasks are announced, until
// ctx ends.
func (w *Worker) listenForTasks(ctx context.Context, rdb redis.UniversalClient) {
	sub := rdb.Subscribe(ctx, pipeline.WakeChannel)
	defer sub.Close()
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-ch:
			if !ok {
				return
			}
			w.gate.Wake()
		}
	}
}

// drain cancels the handlers still running and waits for them to return.
func (w *Worker) drain() {
	w.cancelBase()
	done := make(chan struct{})
	go func() { w.running.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(handlerDrainTimeout):
		w.log.Warn("handlers still running after shutdown", "waited", handlerDrainTimeout)
	}
}

// tracing starts a consumer span per task, a child of the span that
// enqueued it (carried in the task's headers, or the review's stored trace
// context for a task without them) and linked to it.
func tracing(tr trace.Tracer, parent func(context.Context, *asynq.Task) (context.Context, trace.SpanContext)) asynq.MiddlewareFunc {
	return func(next asynq.Handler) asynq.Handler {
		return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
			pctx, producer := parent(ctx, t)
			opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
				attribute.String("messaging.system", "asynq"),
				attribute.String("messaging.operation.type", "process"),
			)}
			if producer.IsValid() {
				opts = append(opts, trace.WithLinks(trace.Link{SpanContext: producer}))
			}
			ctx, span := tr.Start(pctx, t.Type(), opts...)
			defer span.End()
			if id, ok := asynq.GetTaskID(ctx); ok {
				span.SetAttributes(attribute.String("messaging.message.id", id))
			}
			if n, ok := asynq.GetRetryCount(ctx); ok {
				span.SetAttributes(attribute.Int("messaging.asynq.retry_count", n))
			}
			if p, err := pipeline.DecodePayload(t); err == nil {
				span.SetAttributes(attribute.String("review.id", p.ReviewID), attribute.String("review.item", p.Item),
					attribute.String("reviewfleet.stage", string(p.Stage)),
					attribute.String("messaging.destination.name", pipeline.QueueFor(p.Stage, p.Bulk)))
			}
			err := next.ProcessTask(ctx, t)
			if err != nil {
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
			}
			return err
		})
	}
}

// asynqLogger sends asynq's log lines to slog.
type asynqLogger struct{ l *slog.Logger }

func (a asynqLogger) Debug(args ...any) { a.l.Debug(fmt.Sprint(args...)) }
func (a asynqLogger) Info(args ...any)  { a.l.Info(fmt.Sprint(args...)) }
func (a asynqLogger) Warn(args ...any)  { a.l.Warn(fmt.Sprint(args...)) }
func (a asynqLogger) Error(args ...any) { a.l.Error(fmt.Sprint(args...)) }
func (a asynqLogger) Fatal(args ...any) { a.l.Error(fmt.Sprint(args...)) }

// logTaskError logs a task's error at the level its class calls for. A rate
// limit or an outage is waited out, not a fault of the task: a batch against
// a busy provider must not fill the log with warnings for work that will
// simply run later.
func logTaskError(log *slog.Logger, t *asynq.Task, err error) {
	switch c := pipeline.Classify(err); c {
	case pipeline.ClassRateLimited:
		log.Debug("task waits for the provider's rate limit", "type", t.Type(), "payload", string(t.Payload()), "err", err)
	case pipeline.ClassInfra:
		log.Info("task given back", "type", t.Type(), "payload", string(t.Payload()), "err", err)
	default:
		log.Warn("task error", "type", t.Type(), "payload", string(t.Payload()), "class", c.String(), "err", err)
	}
}
