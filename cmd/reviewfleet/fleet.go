package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/health"
	"github.com/reviewfleet/reviewfleet/internal/localenv"
)

func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("worker", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	a, closeApp, err := open(ctx, *cfgPath, stderr, app.Options{Worker: true, Check: needsRedis("a worker needs REDIS_URL: without it there is no queue to share with the rest of the fleet")}, nil)
	if err != nil {
		return err
	}
	defer closeApp()
	// Workers clone with the GitHub credentials: a key that is not there
	// stops the worker here rather than failing every clone later.
	if err := a.GitHub.Check(); err != nil {
		return exitError{code: exitUsage, err: err}
	}
	w, err := a.NewWorker(a.Cfg.Worker)
	if err != nil {
		return err
	}
	for _, w := range a.Cfg.Warnings() {
		fmt.Fprintln(stderr, "worker: warning:", w)
	}
	fmt.Fprintf(stderr, "worker %s: serving review tasks (concurrency %d, poll %s, %d database connections)\n",
		w.ID(), a.Cfg.Worker.Concurrency, a.Cfg.Worker.TaskCheckInterval, a.Store.MaxConns())
	stopping := context.AfterFunc(ctx, func() {
		fmt.Fprintf(stderr, "worker %s: stopping: running tasks get up to %s to finish (worker.shutdown_timeout); "+
			"interrupt again to stop now (they then run again on another worker)\n", w.ID(), a.Cfg.Worker.ShutdownTimeout)
	})
	defer stopping()
	return w.Run(ctx)
}

// needsRedis refuses, before anything local is started, a configuration
// without REDIS_URL, saying msg.
func needsRedis(msg string) func(config.Config) error {
	return func(cfg config.Config) error {
		if cfg.RedisURL == "" {
			return errors.New(msg)
		}
		return nil
	}
}

func cmdScheduler(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("scheduler", stderr)
	once := fs.Bool("once", false, "make one reconcile pass and exit")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	a, closeApp, err := open(ctx, *cfgPath, stderr, app.Options{SkipLLM: true,
		Check: needsRedis("the scheduler needs REDIS_URL: it reconciles the fleet's queues, and an in-process Redis has none")}, nil)
	if err != nil {
		return err
	}
	defer closeApp()
	rec := a.Reconciler()
	if *once {
		st, err := rec.RunOnce(ctx)
		if st.Follower {
			fmt.Fprintln(stdout, "another scheduler is reconciling: nothing done")
			return err
		}
		fmt.Fprintf(stdout, "requeued %d, refreshed %d, archived %d, advanced %d, expired %d, rescued %d, admitted %d\n",
			st.Requeued, st.Refreshed, st.Archived, st.Advanced, st.Expired, st.Rescued, st.Admitted)
		return err
	}
	if addr := a.Cfg.Scheduler.HealthAddr; addr != "" {
		hs, err := health.StartWithMetrics(addr, addr == config.DefaultSchedulerHealthAddr, a.Ready, a.MetricsHandler(true), a.Log)
		if err != nil {
			return err
		}
		defer hs.Stop()
		fmt.Fprintf(stderr, "scheduler: probes on %s (/livez, /readyz, /metrics)\n", hs.Addr())
	}
	fmt.Fprintf(stderr, "scheduler: reconciling every %s\n", a.Cfg.Scheduler.Interval)
	if s := feedbackSyncer(a); s != nil && a.Cfg.Feedback.SyncInterval > 0 {
		fmt.Fprintf(stderr, "scheduler: reading feedback on posted reviews every %s\n", a.Cfg.Feedback.SyncInterval)
		go runFeedbackSync(ctx, a, s, a.Cfg.Feedback.SyncInterval, a.Log)
	}
	if n := len(a.Cfg.Scheduler.Schedules); n > 0 {
		fmt.Fprintf(stderr, "scheduler: %d scheduled bulk reviews (fired by one scheduler process at a time)\n", n)
		sched := a.BulkScheduler()
		errc := make(chan error, 1)
		go func() {
			err := sched.Run(ctx)
			if err != nil && ctx.Err() == nil {
				// Said at once: the reconciler goes on, scheduled reviews do not.
				fmt.Fprintf(stderr, "scheduler: scheduled bulk reviews stopped: %v\n", err)
			}
			errc <- err
		}()
		rerr := rec.Run(ctx, a.Cfg.Scheduler.Interval)
		return errors.Join(rerr, <-errc)
	}
	return rec.Run(ctx, a.Cfg.Scheduler.Interval)
}

func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("migrate", stderr)
	down := fs.Bool("down", false, "revert every migration (drops all reviewfleet data)")
	status := fs.Bool("status", false, "print the schema version and exit")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	a, closeApp, err := open(ctx, *cfgPath, stderr, app.Options{SkipLLM: true, SkipSchemaCheck: true}, nil)
	if err != nil {
		return err
	}
	defer closeApp()
	switch {
	case *status:
		v, err := a.Store.SchemaVersion(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "schema version %d\n", v)
		return nil
	case *down:
		res, err := a.Store.MigrateDown(ctx)
		for _, r := range res {
			fmt.Fprintf(stdout, "reverted %s\n", r.Name)
		}
		return err
	}
	res, err := a.Store.Migrate(ctx)
	for _, r := range res {
		fmt.Fprintf(stdout, "applied %s\n", r.Name)
	}
	if err == nil && len(res) == 0 {
		fmt.Fprintln(stdout, "schema is up to date")
	}
	return err
}

const localUsage = `usage: reviewfleet local start | stop | psql [--url]
  start   start the local Postgres reviews use when DATABASE_URL is unset
  stop    stop it
  psql    open its reviewfleet database with psql (--url: print the connection URL)`

func cmdLocal(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if wantsHelp(args) {
		fmt.Fprintln(stdout, localUsage)
		return nil
	}
	if len(args) == 0 {
		return exitError{code: exitUsage, err: errors.New(localUsage)}
	}
	dir, err := localenv.DataDirFrom(func(k string) string { return getenv(ctx, k) })
	if err != nil {
		return err
	}
	switch {
	case len(args) == 1 && args[0] == "stop":
		stopped, err := localenv.StopPostgres(ctx, localenv.PostgresOptions{DataDir: dir})
		if err != nil {
			return err
		}
		if stopped {
			fmt.Fprintf(stdout, "stopped the local Postgres in %s\n", dir)
		} else {
			fmt.Fprintln(stdout, "no local Postgres is running")
		}
		return nil
	case len(args) == 1 && args[0] == "start":
		pg, err := localenv.StartPostgres(ctx, localenv.PostgresOptions{DataDir: dir, Log: stderr})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "local Postgres running: %s\n", pg.DSN())
		return nil
	case args[0] == "psql" && (len(args) == 1 || (len(args) == 2 && args[1] == "--url")):
		pg, err := localenv.RunningPostgres(dir)
		if err != nil {
			return err
		}
		if len(args) == 2 {
			fmt.Fprintln(stdout, pg.DSN())
			return nil
		}
		psql, err := exec.LookPath("psql")
		if err != nil {
			return fmt.Errorf("psql is not on PATH; connect any client to %s", pg.DSN())
		}
		cmd := exec.CommandContext(ctx, psql, pg.DSN())
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
		return cmd.Run()
	}
	return exitError{code: exitUsage, err: errors.New(localUsage)}
}
