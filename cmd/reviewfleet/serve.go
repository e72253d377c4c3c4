package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/health"
	"github.com/reviewfleet/reviewfleet/internal/publish"
	"github.com/reviewfleet/reviewfleet/internal/webhook"
)

// cmdServe receives GitHub's pull_request webhooks on webhook.addr and
// submits their reviews to the fleet (see package webhook for the design).
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("serve", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	// serve submits to a fleet, whose workers call the model: it needs no
	// model endpoint of its own.
	check := func(cfg config.Config) error {
		if cfg.Webhook.Secret == "" {
			return exitError{code: exitUsage, err: errors.New("serve needs webhook.secret (GITHUB_WEBHOOK_SECRET): unsigned deliveries are refused")}
		}
		if cfg.RedisURL == "" || cfg.DatabaseURL == "" {
			return exitError{code: exitUsage, err: errors.New("serve submits to a fleet: set REDIS_URL and DATABASE_URL and run `reviewfleet worker`")}
		}
		return nil
	}
	a, closeApp, err := open(ctx, *cfgPath, stderr, app.Options{ForFleet: true, Check: check}, nil)
	if err != nil {
		return err
	}
	defer closeApp()
	wcfg := a.Cfg.Webhook
	if err := a.GitHub.Check(); err != nil {
		return exitError{code: exitUsage, err: err}
	}
	proc := &webhook.Processor{Store: a.Store, Clients: a.GitHub, Submitter: a, IgnorePaths: wcfg.IgnorePaths, Log: a.Log,
		Feedback: feedbackSyncer(a)}
	if wcfg.Post {
		proc.Poster = &publish.Poster{Store: a.Store, Clients: a.GitHub, Log: a.Log, Feedback: proc.Feedback}
	}
	// The public port serves the webhook alone: the probes and the
	// metrics (queue depths, repositories, error rates) are for the
	// cluster, on an address of their own.
	mux := http.NewServeMux()
	mux.Handle("/webhook", &webhook.Handler{Store: a.Store, Secret: []byte(wcfg.Secret), Post: wcfg.Post, Nudge: proc.Nudge, Log: a.Log,
		MaxBodyBytes: wcfg.MaxBodyBytes, ReadConcurrency: wcfg.ReadConcurrency, ReplayWindow: wcfg.ReplayWindow,
		MinBodyRate: wcfg.MinBodyRate})
	if wcfg.AdminAddr != "" {
		hs, err := health.StartWithMetrics(wcfg.AdminAddr, wcfg.AdminAddr == config.DefaultWebhookAdminAddr, a.Ready, a.MetricsHandler(false), a.Log)
		if err != nil {
			return err
		}
		defer hs.Stop()
		fmt.Fprintf(stderr, "serve: probes on %s (/livez, /readyz, /metrics)\n", hs.Addr())
	}
	ln, err := net.Listen("tcp", wcfg.Addr)
	if err != nil {
		return fmt.Errorf("listen for webhooks on %s: %w", wcfg.Addr, err)
	}
	// GitHub gives up on a delivery after 10 s: the handler only stores it.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 8 * time.Second, WriteTimeout: 9 * time.Second}
	fmt.Fprintf(stdout, "serving GitHub webhooks on http://%s/webhook\n", ln.Addr())

	// The processor stops with the server: a listener that fails ends the
	// command instead of leaving it waiting for a signal.
	procCtx, stopProc := context.WithCancel(ctx)
	defer stopProc()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = proc.Run(procCtx) }()
	if a.Cfg.Console.Enabled() {
		// The console on a listener of its own: the webhook port faces
		// GitHub, the console only the people who read the reviews.
		cln, err := net.Listen("tcp", a.Cfg.Console.Addr)
		if err != nil {
			stopProc()
			wg.Wait()
			return fmt.Errorf("listen for the console on %s: %w", a.Cfg.Console.Addr, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := serveConsole(procCtx, a.Cfg, "", cln, stdout, stderr); err != nil {
				fmt.Fprintf(stderr, "serve: console stopped: %v\n", err)
			}
		}()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
		stopProc()
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = srv.Shutdown(sctx)
		cancel()
		err = nil
	}
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
