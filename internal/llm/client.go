package llm

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/reviewfleet/reviewfleet/internal/childtrace"
	"github.com/reviewfleet/reviewfleet/internal/credscope"
	"github.com/reviewfleet/reviewfleet/internal/httpwait"
)

// Client calls an OpenAI-compatible chat completion endpoint. It is safe for
// concurrent use; build one per worker and share it between goroutines.
type Client struct {
	cfg       Config
	endpoints []*endpoint // one when no pool was configured
	http      *http.Client
	limiter   Limiter
	recorder  Recorder
	budget    Budget
	tracer    trace.Tracer
	logger    *slog.Logger
	sleep     func(ctx context.Context, d time.Duration) error
	// memory holds what was derived from recent calls' requests.
	memory *memory
}

// Meta says who is calling. Model is required; the other fields identify the
// call in records, budgets and traces.
type Meta struct {
	ReviewID, Stage, ItemKey, Model string
}

// New builds a Client. It returns ErrNotConfigured when cfg.BaseURL is empty.
func New(cfg Config, opts ...Option) (*Client, error) {
	if strings.TrimSpace(cfg.BaseURL) == "" {
		return nil, ErrNotConfigured
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("LLM base URL %q: want an http(s) URL such as https://api.openai.com/v1", cfg.BaseURL)
	}
	if cfg.Timeout < 0 || cfg.MaxAttempts < 0 || cfg.RetryBackoff < 0 || cfg.MaxRetryWait < 0 {
		return nil, fmt.Errorf("LLM config: timeout, max attempts, retry backoff and max retry wait must not be negative")
	}
	cfg = cfg.withDefaults()

	var o options
	for _, opt := range opts {
		opt(&o)
	}
	hc := o.httpClient
	if hc == nil {
		hc = newHTTPClient(cfg.Timeout)
	}
	eps := o.endpoints
	if len(eps) == 0 {
		eps = []Endpoint{{Name: "default", BaseURL: cfg.BaseURL, APIKey: cfg.APIKey}}
	}
	var pool []*endpoint
	for _, ep := range eps {
		e, err := newEndpoint(ep, hc)
		if err != nil {
			return nil, err
		}
		pool = append(pool, e)
	}

	c := &Client{
		cfg:       cfg,
		endpoints: pool,
		http:      hc,
		limiter:   o.limiter,
		recorder:  o.recorder,
		budget:    o.budget,
		tracer:    o.tracer,
		logger:    o.logger,
		sleep:     httpwait.Sleep,
		memory:    newMemory(),
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	return c, nil
}

// CloseIdleConnections releases idle keep-alive connections to the endpoint.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// newHTTPClient builds a client whose connection setup is bounded; the
// whole request is bounded per attempt through its context.
func newHTTPClient(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	// otelhttp adds a client span per HTTP attempt (inside the model
	// call's span) and sends the trace context to the endpoint. The key
	// is not forwarded to a redirect that leaves the endpoint's origin
	// (Go keeps it for another port or a subdomain).
	return &http.Client{CheckRedirect: credscope.CheckRedirect, Transport: otelhttp.NewTransport(&http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   32,
		ForceAttemptHTTP2:     true,
	}, otelhttp.WithTracerProvider(childtrace.ChildOnly()))}
}

// exchange is what the HTTP layer saw during one attempt. go-openai keeps
// response headers only on success, so captureDoer stores them here.
type exchange struct {
	stage  string // the calling stage and item, sent as headers
	item   string
	sent   bool
	status int
	header http.Header
}

type exchangeKey struct{}

// Every request names the stage and the item it was made for in these
// headers, so a server replaying recorded replies can say which request it
// has no reply for.
const (
	HeaderStage = "X-Reviewfleet-Stage"
	HeaderItem  = "X-Reviewfleet-Item"
)

// captureDoer records the status and headers of every response into the
// exchange carried by the request context.
type captureDoer struct{ inner *http.Client }

// Do sends req and notes the response status and headers.
func (d captureDoer) Do(req *http.Request) (*http.Response, error) {
	ex, _ := req.Context().Value(exchangeKey{}).(*exchange)
	if ex != nil {
		ex.sent = true
		if ex.stage != "" {
			req.Header.Set(HeaderStage, ex.stage)
		}
		if ex.item != "" {
			// Escaped: an item key holds a path, which may hold anything.
			req.Header.Set(HeaderItem, url.PathEscape(ex.item))
		}
	}
	resp, err := d.inner.Do(req)
	if ex != nil && resp != nil {
		ex.status = resp.StatusCode
		ex.header = resp.Header.Clone()
	}
	return resp, err
}
