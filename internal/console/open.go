package console

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/hibiken/asynq"
	"github.com/hibiken/asynqmon"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/store"
)

// Fleet is a console opened on a configuration: its connections and the
// handler that serves it.
type Fleet struct {
	*Console
	closers []func()
}

// Close releases the console's connections.
func (f *Fleet) Close() {
	for i := len(f.closers) - 1; i >= 0; i-- {
		f.closers[i]()
	}
}

// Open connects a console as cfg says: its pages read through
// console.database_url (database_url when empty) in read-only
// transactions; Redis (redis_url) shows the workers and queues and serves
// the queue monitor at /queues; when an admin can sign in, cancelling a
// batch goes through database_url. dsn overrides database_url when the
// caller found the database elsewhere (the local Postgres).
func Open(ctx context.Context, cfg config.Config, dsn string, log *slog.Logger) (_ *Fleet, err error) {
	if dsn == "" {
		dsn = cfg.DatabaseURL
	}
	cc := cfg.Console
	if !cc.Enabled() {
		return nil, errors.New("the console needs a way to sign in: set console.token (REVIEWFLEET_CONSOLE_TOKEN), or console.proxy_user_header with console.trusted_proxies")
	}
	readURL := cc.DatabaseURL
	if readURL == "" {
		readURL = dsn
	}
	if readURL == "" {
		return nil, errors.New("the console needs a database: set DATABASE_URL or console.database_url")
	}
	f := &Fleet{}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	pcfg, err := pgxpool.ParseConfig(readURL)
	if err != nil {
		return nil, fmt.Errorf("parse the console's database url: %w", err)
	}
	// Every transaction is read-only whatever the role may do, and no
	// page's query holds a connection for long.
	pcfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	pcfg.ConnConfig.RuntimeParams["statement_timeout"] = "15000"
	pcfg.ConnConfig.RuntimeParams["application_name"] = "reviewfleet-console"
	pcfg.MaxConns = 8
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("connect the console to postgres: %w", err)
	}
	f.closers = append(f.closers, pool.Close)
	if err := pool.Ping(ctx); err != nil {
		return nil, fmt.Errorf("connect the console to postgres at %s:%d: %w", pcfg.ConnConfig.Host, pcfg.ConnConfig.Port, err)
	}
	proxies, err := cc.Proxies()
	if err != nil {
		return nil, err
	}
	opts := Options{
		DB: pool, Token: cc.Token, AdminToken: cc.AdminToken, TrustedProxies: proxies,
		ProxyUserHeader: cc.ProxyUserHeader, AdminUsers: cc.AdminUsers, SessionTTL: cc.SessionTTL,
		FleetRequestsPerMinute: cfg.LLM.FleetRequestsPerMinute, FleetTokensPerMinute: cfg.LLM.FleetTokensPerMinute,
		Log: log,
	}
	if cfg.RedisURL != "" {
		ropt, err := asynq.ParseRedisURI(cfg.RedisURL)
		if err != nil {
			return nil, fmt.Errorf("parse REDIS_URL: %w", err)
		}
		rdb, ok := ropt.MakeRedisClient().(redis.UniversalClient)
		if !ok {
			return nil, fmt.Errorf("REDIS_URL: unsupported connection type %T", ropt)
		}
		f.closers = append(f.closers, func() { _ = rdb.Close() })
		opts.Redis = rdb
		opts.Inspector = asynq.NewInspectorFromRedisClient(rdb)
		mon := asynqmon.New(asynqmon.Options{RootPath: "/queues", RedisConnOpt: ropt, ReadOnly: true})
		f.closers = append(f.closers, func() { _ = mon.Close() })
		opts.Queues = mon
	}
	if (cc.AdminToken != "" || len(cc.AdminUsers) > 0) && dsn != "" {
		st, err := store.Open(ctx, dsn)
		if err != nil {
			return nil, fmt.Errorf("open the store for cancelling batches: %w", err)
		}
		f.closers = append(f.closers, st.Close)
		opts.Canceller = st.CancelBatch
	}
	c, err := New(opts)
	if err != nil {
		return nil, err
	}
	f.Console = c
	return f, nil
}

// Serve serves the console on ln until ctx ends, then shuts down; over
// https when certFile and keyFile are given.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, certFile, keyFile string) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() {
		if certFile != "" {
			errc <- srv.ServeTLS(ln, certFile, keyFile)
			return
		}
		errc <- srv.Serve(ln)
	}()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return nil
	}
}
