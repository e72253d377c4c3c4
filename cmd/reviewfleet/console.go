package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/console"
	"github.com/reviewfleet/reviewfleet/internal/localenv"
)

// cmdConsole serves the read-only web console (internal/console) on
// console.addr.
func cmdConsole(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("console", stderr)
	addr := fs.String("addr", "", "listen address (default console.addr)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	env := envOf(ctx)
	if *cfgPath == "" {
		*cfgPath = getenv(ctx, "REVIEWFLEET_CONFIG")
	}
	cfg, err := config.LoadEnv(*cfgPath, env.lookup)
	if err != nil {
		return err
	}
	if *addr != "" {
		cfg.Console.Addr = *addr
	}
	if !cfg.Console.Enabled() {
		return exitError{code: exitUsage, err: errors.New("the console serves nobody without a sign-in: set REVIEWFLEET_CONSOLE_TOKEN (console.token), or console.proxy_user_header with console.trusted_proxies")}
	}
	dsn := cfg.DatabaseURL
	if dsn == "" && cfg.Console.DatabaseURL == "" {
		// The local Postgres of `review`, when it runs: the console never
		// starts one of its own.
		dir, err := localenv.DefaultDataDir()
		if err != nil {
			return err
		}
		pg, err := localenv.RunningPostgres(dir)
		if err != nil {
			return fmt.Errorf("no DATABASE_URL is set and no local Postgres runs: %w", err)
		}
		dsn = pg.DSN()
	}
	ln, err := net.Listen("tcp", cfg.Console.Addr)
	if err != nil {
		return fmt.Errorf("listen for the console on %s: %w", cfg.Console.Addr, err)
	}
	defer ln.Close()
	return serveConsole(ctx, cfg, dsn, ln, stdout, stderr)
}

// serveConsole opens the console and serves it on ln until ctx ends.
func serveConsole(ctx context.Context, cfg config.Config, dsn string, ln net.Listener, stdout, stderr io.Writer) error {
	c, err := console.Open(ctx, cfg, dsn, logger(ctx, stderr))
	if err != nil {
		return err
	}
	defer c.Close()
	if cfg.RedisURL == "" {
		fmt.Fprintln(stderr, "console: no REDIS_URL: the fleet page shows no workers or queues, and /queues is off")
	}
	scheme := "http"
	if cfg.Console.TLSCertFile != "" {
		scheme = "https"
	}
	fmt.Fprintf(stdout, "console on %s://%s/\n", scheme, ln.Addr())
	return console.Serve(ctx, ln, c, cfg.Console.TLSCertFile, cfg.Console.TLSKeyFile)
}
