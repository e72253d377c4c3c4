// Package health serves the probes of a long-running process: /livez
// answers as long as the process serves HTTP (a database or Redis blip must
// not get every worker restarted), /readyz also checks the dependencies.
// /healthz is kept as an alias of /livez for older probe configurations.
// The same server serves the Prometheus metrics on /metrics.
package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"
)

// Server is a running probe server.
type Server struct {
	srv *http.Server
	ln  net.Listener
}

// Start listens on addr and serves the probes; ready checks the
// dependencies for /readyz (nil: always ready). When addr is taken and
// fallback is true (the default address, e.g. a second worker on the same
// host), it listens on a free port instead and logs which.
func Start(addr string, fallback bool, ready func(context.Context) error, log *slog.Logger) (*Server, error) {
	return StartWithMetrics(addr, fallback, ready, nil, log)
}

// StartWithMetrics is Start that also serves metrics on /metrics (none
// when nil). Like /livez, /metrics answers while Postgres or Redis is down
// (their own gauges then report the error).
func StartWithMetrics(addr string, fallback bool, ready func(context.Context) error, metrics http.Handler, log *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil && fallback && errors.Is(err, syscall.EADDRINUSE) {
		host, _, _ := net.SplitHostPort(addr)
		ln, err = net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err == nil {
			log.Warn("health address taken: serving the probes on a free port instead", "wanted", addr, "addr", ln.Addr().String())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("listen for health checks on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	Handle(mux, ready, metrics)
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, ln: ln}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("health server", "err", err)
		}
	}()
	return s, nil
}

// Handle adds /livez, /healthz, /readyz and /metrics to mux, for a process
// that serves the probes on its own listener; ready checks the dependencies
// for /readyz (nil: always ready); metrics serves /metrics (nil: none).
func Handle(mux *http.ServeMux, ready func(context.Context) error, metrics http.Handler) {
	live := func(rw http.ResponseWriter, _ *http.Request) { _, _ = rw.Write([]byte("ok\n")) }
	mux.HandleFunc("/livez", live)
	mux.HandleFunc("/healthz", live)
	if metrics != nil {
		mux.Handle("/metrics", metrics)
	}
	mux.HandleFunc("/readyz", func(rw http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		if ready != nil {
			if err := ready(ctx); err != nil {
				http.Error(rw, err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = rw.Write([]byte("ok\n"))
	})
}

// Addr is the address the probes are served on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Stop shuts the server down, waiting up to five seconds for requests.
func (s *Server) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
}
