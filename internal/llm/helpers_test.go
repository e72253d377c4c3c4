package llm

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

// memRecorder keeps every record in memory.
type memRecorder struct {
	mu      sync.Mutex
	records []CallRecord
}

func (m *memRecorder) RecordLLMCall(_ context.Context, r CallRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records = append(m.records, r)
	return nil
}

func (m *memRecorder) statuses() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, len(m.records))
	for i, r := range m.records {
		out[i] = r.Status
	}
	return out
}

func (m *memRecorder) all() []CallRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]CallRecord(nil), m.records...)
}

// sleeps records the pauses between attempts instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	ds []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.ds = append(s.ds, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) list() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.ds...)
}

// penalties records what a client asks of its limiter.
type penalties struct {
	mu    sync.Mutex
	waits []int
	ds    []time.Duration
}

func (p *penalties) Wait(_ context.Context, tokens int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waits = append(p.waits, tokens)
	return nil
}

func (p *penalties) Penalize(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ds = append(p.ds, d)
}

func (p *penalties) penalties() []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Duration(nil), p.ds...)
}

// harness is a client wired to a fake server, a recorder and a fake sleep.
type harness struct {
	client *Client
	server *llmfake.Server
	rec    *memRecorder
	sleeps *sleeps
}

func newHarness(t *testing.T, h llmfake.Handler, cfg Config, opts ...Option) *harness {
	t.Helper()
	srv := llmfake.New(h)
	t.Cleanup(srv.Close)
	rec := &memRecorder{}
	cfg.BaseURL = srv.URL
	if cfg.APIKey == "" {
		cfg.APIKey = "test-key"
	}
	c, err := New(cfg, append([]Option{WithRecorder(rec)}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.CloseIdleConnections)
	s := &sleeps{}
	c.sleep = s.sleep
	return &harness{client: c, server: srv, rec: rec, sleeps: s}
}

var testMeta = Meta{ReviewID: "rev-1", Stage: "intent", ItemKey: "file:main.go", Model: "test-model"}
