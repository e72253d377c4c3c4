// Package app wires reviewfleet's parts together from a configuration:
// Postgres (or a local cluster), Redis (or an in-process one), the LLM
// client with its recorder, budget and rate limits, the prompts, the
// pipeline, the workers' handlers and the reconciler. Commands and
// end-to-end tests build on it.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/exaring/otelpgx"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"

	"github.com/reviewfleet/reviewfleet/internal/bulk"
	"github.com/reviewfleet/reviewfleet/internal/childtrace"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/credscope"
	"github.com/reviewfleet/reviewfleet/internal/diff"
	"github.com/reviewfleet/reviewfleet/internal/llm"
	"github.com/reviewfleet/reviewfleet/internal/localenv"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/prompts"
	"github.com/reviewfleet/reviewfleet/internal/pullrequest"
	"github.com/reviewfleet/reviewfleet/internal/redact"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/snapshot"
	"github.com/reviewfleet/reviewfleet/scheduler"
	"github.com/reviewfleet/reviewfleet/stages/eval"
	"github.com/reviewfleet/reviewfleet/stages/expert"
	"github.com/reviewfleet/reviewfleet/stages/intent"
	"github.com/reviewfleet/reviewfleet/stages/report"
	"github.com/reviewfleet/reviewfleet/stages/verify"
	"github.com/reviewfleet/reviewfleet/store"
	"github.com/reviewfleet/reviewfleet/worker"
)

var errNoEndpoint = errors.New("no LLM endpoint is configured: set OPENAI_BASE_URL (for example https://api.openai.com/v1) and OPENAI_API_KEY, or llm.base_url / llm.api_key in the config file; `reviewfleet review --demo` runs offline on a recorded exchange")

// Options tunes Open.
type Options struct {
	// Log receives structured logs (default: discard below warnings to stderr).
	Log *slog.Logger
	// Notices receives one-line human notices (local services started…).
	Notices io.Writer
	// Migrate applies migrations even against a configured DATABASE_URL.
	Migrate bool
	// SkipLLM opens everything but the LLM client (status, report, migrate).
	SkipLLM bool
	// SkipSchemaCheck opens a database whose migrations are pending (the
	// migrate command itself).
	SkipSchemaCheck bool
	// NoStartLocal uses the local Postgres only if it is running: read-only
	// commands say it is stopped instead of starting it again.
	NoStartLocal bool
	// ForFleet opens the app of a command that submits reviews and waits
	// for them: the LLM client is opened only when this process is the
	// fleet (no REDIS_URL). Submitting to a fleet of workers needs no
	// model endpoint: the workers hold the model's credentials.
	ForFleet bool
	// Check, when set, is called with the configuration before anything
	// is opened or started, and its error is Open's: a command that
	// cannot run with the configuration says so before any notice about
	// a local Postgres or an in-process Redis.
	Check func(config.Config) error
	// Getenv reads the environment the app takes GITHUB_TOKEN, the API
	// keys of llm.endpoints and XDG_DATA_HOME from (nil: the process's),
	// so that a caller can run with variables of its own.
	Getenv func(string) string
	// InProcessReason says why the queue and the worker run in this
	// process when the caller cleared REDIS_URL itself (a replay whose
	// model server lives here); the notice names it instead of a missing
	// REDIS_URL.
	InProcessReason string
	// Worker opens the app of a worker process: its pool keeps a session
	// per slot open, and the secret scanner is built before the first
	// task needs it.
	Worker bool
}

// App is an opened set of dependencies.
type App struct {
	Cfg       config.Config
	Store     *store.Store
	RedisOpt  asynq.RedisConnOpt
	Client    *asynq.Client
	Inspector *asynq.Inspector
	Pipeline  *pipeline.Pipeline
	// GitHub builds API clients (GITHUB_TOKEN or the GitHub App) for pull
	// requests, posting and clones.
	GitHub     *pullrequest.Clients
	LLM        *llm.Client
	Prompts    *prompts.Set
	Snapshots  *snapshot.Cache
	LocalRedis bool // an in-process Redis: workers must run in this process
	Log        *slog.Logger

	rdb             redis.UniversalClient
	closers         []func()
	getenv          func(string) string
	skipSchemaCheck bool
	noStartLocal    bool
	inProcessReason string
}

// Open connects everything the configuration asks for, starting local
// services where no connection is configured.
func Open(ctx context.Context, cfg config.Config, opts Options) (_ *App, err error) {
	a := &App{Cfg: cfg, Log: opts.Log, skipSchemaCheck: opts.SkipSchemaCheck, noStartLocal: opts.NoStartLocal,
		inProcessReason: opts.InProcessReason}
	if a.Log == nil {
		a.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if a.getenv = opts.Getenv; a.getenv == nil {
		a.getenv = os.Getenv
	}
	if opts.Check != nil {
		if err := opts.Check(cfg); err != nil {
			return nil, err
		}
	}
	skipLLM := opts.SkipLLM || (opts.ForFleet && cfg.RedisURL != "")
	if !skipLLM && strings.TrimSpace(cfg.LLM.BaseURL) == "" && len(cfg.LLM.Endpoints) == 0 {
		return nil, errNoEndpoint
	}
	notices := opts.Notices
	if notices == nil {
		notices = io.Discard
	}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()

	if opts.Worker {
		if err := redact.Prepare(); err != nil {
			return nil, err
		}
	}
	if err := a.openStore(ctx, notices, opts.Migrate, opts.Worker); err != nil {
		return nil, err
	}
	if err := a.openRedis(ctx, notices); err != nil {
		return nil, err
	}
	if a.Prompts, err = prompts.Load(cfg.Prompts.Dir); err != nil {
		return nil, fmt.Errorf("load prompts: %w", err)
	}
	cache, err := cacheDir(cfg)
	if err != nil {
		return nil, err
	}
	// Clones of the configured GitHub's private repositories use the same
	// credential as its API (GITHUB_TOKEN or the App's installation token).
	if a.GitHub, err = pullrequest.NewClients(cfg.GitHub, a.getenv("GITHUB_TOKEN"), nil); err != nil {
		return nil, err
	}
	// The fleet's git token belongs to the hosts configured for it; by
	// default the configured GitHub's, where GITHUB_TOKEN goes too.
	tokenHosts := cfg.Snapshot.GitTokenHosts
	if len(tokenHosts) == 0 && a.GitHub.GitScope() != "" {
		tokenHosts = []string{a.GitHub.GitScope()}
	}
	tokenScopes, err := credscope.ParseSet(tokenHosts)
	if err != nil {
		return nil, fmt.Errorf("snapshot.git_token_hosts: %w", err)
	}
	a.Snapshots = &snapshot.Cache{
		Dir: cache, Store: a.Store, MaxBytes: cfg.Snapshot.MaxBytes, TokenFile: cfg.Snapshot.GitTokenFile, Log: a.Log,
		TokenScopes: tokenScopes, HostToken: a.GitHub.GitToken,
		Retryable: func(ctx context.Context) bool {
			n, ok := asynq.GetRetryCount(ctx)
			limit, ok2 := asynq.GetMaxRetry(ctx)
			return ok && ok2 && n < limit
		},
	}
	a.Pipeline = &pipeline.Pipeline{
		Store: a.Store, Queue: a.Client, Triage: pipeline.Triage, MaxRetry: cfg.Worker.MaxRetry, Log: a.Log,
		Admission:          store.Admission{Capacity: cfg.Fleet.MaxRunningReviews, PerBatch: cfg.Bulk.MaxRunningPerBatch},
		EnqueueParallelism: cfg.Scheduler.EnqueueParallelism,
	}
	a.Pipeline.OnFailed = a.StoreFailureReport
	a.Pipeline.Capacity = a.fleetCapacity()
	a.Pipeline.Announce = func(ctx context.Context) { _ = a.rdb.Publish(ctx, pipeline.WakeChannel, "1").Err() }
	if !skipLLM {
		if err := a.openLLM(); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func (a *App) openStore(ctx context.Context, notices io.Writer, migrate, worker bool) error {
	dsn := a.Cfg.DatabaseURL
	local := dsn == ""
	if local {
		dataDir, err := localenv.DataDirFrom(a.getenv)
		if err != nil {
			return err
		}
		var pg *localenv.LocalPostgres
		if a.noStartLocal {
			pg, err = localenv.RunningPostgres(dataDir)
			if err != nil {
				return err
			}
		} else if pg, err = localenv.StartPostgres(ctx, localenv.PostgresOptions{DataDir: dataDir, Log: notices}); err != nil {
			return fmt.Errorf("no DATABASE_URL is set, and a local Postgres could not be started: %w", err)
		}
		if !pg.Reused() {
			fmt.Fprintf(notices, "started a local Postgres in %s (port %d); it keeps running for the next review (`reviewfleet local stop` stops it)\n", pg.DataDir(), pg.Port())
		}
		dsn = pg.DSN()
	}
	pool := store.PoolOptions{MaxConns: a.Cfg.PoolSize(), StatementTimeout: a.Cfg.Database.StatementTimeout,
		Tracer: otelpgx.NewTracer(otelpgx.WithTracerProvider(childtrace.ChildOnly()), otelpgx.WithDisableAcquireTracer())}
	if worker {
		pool.MinConns, pool.Warm = a.Cfg.Worker.Concurrency, true
	}
	if a.skipSchemaCheck {
		pool.StatementTimeout = 0 // the migrate command: a migration may take long
	}
	st, err := store.OpenWith(ctx, dsn, pool)
	if err != nil {
		return err
	}
	a.Store = st
	a.closers = append(a.closers, st.Close)
	if local || migrate {
		if _, err := st.Migrate(ctx); err != nil {
			return err
		}
		return nil
	}
	if !a.skipSchemaCheck {
		return st.CheckSchema(ctx)
	}
	return nil
}

func (a *App) openRedis(ctx context.Context, notices io.Writer) error {
	if a.Cfg.RedisURL == "" {
		addr, stop, err := localenv.StartRedis()
		if err != nil {
			return fmt.Errorf("start in-process redis: %w", err)
		}
		a.closers = append(a.closers, stop)
		a.RedisOpt = asynq.RedisClientOpt{Addr: addr}
		a.LocalRedis = true
		reason := "no REDIS_URL is set"
		if a.inProcessReason != "" {
			reason = a.inProcessReason
		}
		fmt.Fprintln(notices, reason+": using an in-process Redis and an in-process worker")
	} else {
		opt, err := asynq.ParseRedisURI(a.Cfg.RedisURL)
		if err != nil {
			return fmt.Errorf("parse REDIS_URL: %w", err)
		}
		a.RedisOpt = opt
	}
	a.rdb = a.RedisOpt.MakeRedisClient().(redis.UniversalClient)
	a.closers = append(a.closers, func() { _ = a.rdb.Close() })
	// Enqueues, the fleet limiter and the wake-ups, inside a review's trace.
	if err := redisotel.InstrumentTracing(a.rdb, redisotel.WithTracerProvider(childtrace.ChildOnly())); err != nil {
		return fmt.Errorf("instrument redis: %w", err)
	}
	if err := a.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("connect to redis: %w", err)
	}
	a.Client = asynq.NewClientFromRedisClient(a.rdb)
	a.Inspector = asynq.NewInspectorFromRedisClient(a.rdb)
	return nil
}

func (a *App) openLLM() error {
	c := a.Cfg.LLM
	limiters := []llm.Limiter{llm.NewLocalLimiter(c.RequestsPerMinute, c.TokensPerMinute)}
	if a.rdb != nil {
		// Always on, also without a fleet quota: it carries the fleet-wide
		// cool-down after a permanent auth or quota error.
		limiters = append(limiters, llm.NewRedisLimiterBurst(a.rdb, "reviewfleet:llm:quota", llm.EndpointID(c.BaseURL, c.APIKey),
			c.FleetRequestsPerMinute, c.FleetTokensPerMinute, c.FleetBurst))
	}
	eps := a.endpoints()
	baseURL := c.BaseURL
	if baseURL == "" && len(eps) > 0 {
		baseURL = eps[0].BaseURL
	}
	client, err := llm.New(llm.Config{
		BaseURL: baseURL, APIKey: c.APIKey, Timeout: c.Timeout, MaxAttempts: c.MaxAttempts,
		OmitBodies: !c.RecordExchanges, CoolDown: c.CoolDown,
	},
		llm.WithLimiter(llm.Combine(limiters...)),
		llm.WithEndpoints(eps...),
		llm.WithRecorder(recorder{st: a.Store, prices: c.Prices}),
		llm.WithBudget(budget{st: a.Store, maxCalls: c.MaxCallsPerReview, maxTokens: c.MaxTokensPerReview}),
		llm.WithLogger(a.Log),
		llm.WithTracer(otel.Tracer("reviewfleet/llm")),
	)
	if err != nil {
		if errors.Is(err, llm.ErrNotConfigured) {
			return errNoEndpoint
		}
		return fmt.Errorf("build LLM client: %w", err)
	}
	a.LLM = client
	return nil
}

// Handlers builds the handler of every task step of pipeline.Steps (the
// implementation each step's Impl names; TestHandlersImplementTheTable
// holds the two together).
func (a *App) Handlers() worker.Handlers {
	ignore := func(path string) bool {
		skip, _ := diff.ClassifyPath(path, a.Cfg.Intent.Ignore)
		return skip
	}
	return worker.Handlers{
		review.StageIntent: &intent.Handler{Store: a.Store, LLM: a.LLM, Prompts: a.Prompts, Warm: a.warmSnapshot},
		review.StageVerify: &verify.Handler{Store: a.Store, LLM: a.LLM, Prompts: a.Prompts},
		review.StageExpert: &expert.Handler{Store: a.Store, LLM: a.LLM, Prompts: a.Prompts, Snapshots: a.Snapshots, Ignore: ignore},
		review.StageEval:   &eval.Handler{Store: a.Store, LLM: a.LLM, Prompts: a.Prompts},
		review.StageReport: &report.Handler{Store: a.Store},
	}
}

// warmSnapshot prepares a review's head tree for its expert runs in the
// background (snapshot.Cache.Warm).
func (a *App) warmSnapshot(r review.Review) {
	if a.Snapshots != nil {
		a.Snapshots.Warm(r)
	}
}

// NewWorker builds a worker serving every stage.
func (a *App) NewWorker(cfg config.Worker) (*worker.Worker, error) {
	return a.newWorker(cfg, a.Pipeline)
}

// newWorker builds a worker serving every stage through p.
func (a *App) newWorker(cfg config.Worker, p *pipeline.Pipeline) (*worker.Worker, error) {
	if a.LLM == nil {
		return nil, errors.New("worker needs an LLM endpoint")
	}
	w, err := worker.New(a.RedisOpt, cfg, p, a.Handlers(), a.Ready, a.Log)
	if err != nil {
		return nil, err
	}
	w.ServeMetrics(a.MetricsHandler(false))
	return w, nil
}

// Ready checks that Postgres and Redis answer (the /readyz probe).
func (a *App) Ready(ctx context.Context) error {
	if err := a.Store.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if err := a.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	return nil
}

// Reconciler builds the scheduler's reconciler.
func (a *App) Reconciler() *scheduler.Reconciler {
	return &scheduler.Reconciler{
		Store: a.Store, Pipeline: a.Pipeline, Inspector: a.Inspector, Redis: a.rdb,
		RequeueAfter: a.Cfg.Scheduler.RequeueAfter, BatchSize: a.Cfg.Scheduler.BatchSize, Log: a.Log,
		OnFailed: func(ctx context.Context, id string) { a.StoreFailureReport(ctx, id) },
	}
}

// BulkScheduler builds the scheduler of the configured scheduled bulk
// reviews, submitting their batches through this app.
func (a *App) BulkScheduler() *bulk.Scheduler {
	return &bulk.Scheduler{
		Redis: a.RedisOpt, Store: a.Store, Reviews: a, SubmitConcurrency: a.Cfg.Bulk.SubmitConcurrency,
		GitHubAPIURL: a.Cfg.GitHub.APIURL, Log: a.Log, Schedules: a.Cfg.Scheduler.Schedules,
	}
}

// StoreFailureReport stores a report for a review that failed, saying why.
func (a *App) StoreFailureReport(ctx context.Context, id string) {
	rep, err := report.Build(ctx, a.Store, id)
	if err != nil {
		a.Log.Warn("build failure report", "review", id, "err", err)
		return
	}
	stored, err := report.Render(rep)
	if err == nil {
		err = a.Store.SaveReport(ctx, stored)
	}
	if err != nil {
		a.Log.Warn("store failure report", "review", id, "err", err)
	}
}

// Close releases everything Open acquired, in reverse order.
func (a *App) Close() {
	if a.Client != nil {
		_ = a.Client.Close()
		a.Client = nil
	}
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}

func cacheDir(cfg config.Config) (string, error) {
	if cfg.Expert.SnapshotDir != "" {
		return cfg.Expert.SnapshotDir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find a cache directory (set expert.snapshot_dir): %w", err)
	}
	return filepath.Join(base, "reviewfleet"), nil
}

// endpoints builds the llm.endpoints pool, each member with its own fleet
// quota and cool-down in Redis (none without Redis).
func (a *App) endpoints() []llm.Endpoint {
	var out []llm.Endpoint
	for _, e := range a.Cfg.LLM.Endpoints {
		key := a.getenv(e.APIKeyEnv)
		ep := llm.Endpoint{Name: e.Name, BaseURL: e.BaseURL, APIKey: key, Models: e.Models, Weight: e.Weight}
		if a.rdb != nil {
			ep.Limiter = llm.NewRedisLimiterBurst(a.rdb, "reviewfleet:llm:quota:"+e.Name, llm.EndpointID(e.BaseURL, key),
				e.RequestsPerMinute, e.TokensPerMinute, a.Cfg.LLM.FleetBurst)
		}
		out = append(out, ep)
	}
	return out
}
