package health_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/health"
)

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// Liveness does not depend on the database; readiness does.
func TestLiveWhileNotReady(t *testing.T) {
	s, err := health.Start("127.0.0.1:0", false, func(context.Context) error { return errors.New("postgres: down") }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	base := "http://" + s.Addr()
	if c := get(t, base+"/livez"); c != http.StatusOK {
		t.Errorf("/livez = %d, want 200", c)
	}
	if c := get(t, base+"/healthz"); c != http.StatusOK {
		t.Errorf("/healthz = %d, want 200", c)
	}
	if c := get(t, base+"/readyz"); c != http.StatusServiceUnavailable {
		t.Errorf("/readyz = %d, want 503", c)
	}
}

// A second process on a host whose default health port is taken serves on
// a free port and says so; a configured address that is taken is an error.
func TestTakenAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	s, err := health.Start(ln.Addr().String(), true, nil, log)
	if err != nil {
		t.Fatalf("fallback: %v", err)
	}
	defer s.Stop()
	if s.Addr() == ln.Addr().String() {
		t.Fatalf("served on the taken address %s", s.Addr())
	}
	if !strings.Contains(logs.String(), s.Addr()) {
		t.Errorf("log does not name the port used: %q", logs.String())
	}
	if c := get(t, "http://"+s.Addr()+"/livez"); c != http.StatusOK {
		t.Errorf("/livez on fallback = %d", c)
	}
	if _, err := health.Start(ln.Addr().String(), false, nil, log); err == nil {
		t.Error("a taken configured address was accepted")
	}
}

// /metrics answers next to the probes, also while the dependencies are
// down, and only when a handler was given.
func TestMetricsWhileNotReady(t *testing.T) {
	down := func(context.Context) error { return errors.New("redis: down") }
	metrics := http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(rw, "up 1\n") })
	s, err := health.StartWithMetrics("127.0.0.1:0", false, down, metrics, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	base := "http://" + s.Addr()
	if c := get(t, base+"/metrics"); c != http.StatusOK {
		t.Errorf("/metrics = %d, want 200", c)
	}
	if c := get(t, base+"/livez"); c != http.StatusOK {
		t.Errorf("/livez = %d, want 200", c)
	}
	if c := get(t, base+"/readyz"); c != http.StatusServiceUnavailable {
		t.Errorf("/readyz = %d, want 503", c)
	}
	plain, err := health.Start("127.0.0.1:0", false, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Stop()
	if c := get(t, "http://"+plain.Addr()+"/metrics"); c != http.StatusNotFound {
		t.Errorf("/metrics without a handler = %d, want 404", c)
	}
}
