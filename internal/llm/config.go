package llm

import (
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultTimeout        = 120 * time.Second
	DefaultMaxAttempts    = 3
	DefaultRetryBackoff   = 500 * time.Millisecond
	DefaultMaxRetryWait   = 10 * time.Second
	DefaultCoolDown       = 30 * time.Second
	DefaultOpenAIBaseURL  = "https://api.openai.com/v1"
	defaultRecordTimeout  = 5 * time.Second
	defaultEstimateOutput = 1024
)

// Config configures a Client.
type Config struct {
	// BaseURL of the OpenAI-compatible API, including the version prefix
	// (for example "https://api.openai.com/v1"). Required.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends no Authorization header.
	APIKey string
	// Timeout bounds one HTTP request (default 120s).
	Timeout time.Duration
	// MaxAttempts is how many HTTP requests one call may make when the
	// server answers 5xx, 408, 409 or 429, or the network fails (default 3).
	MaxAttempts int
	// RetryBackoff is the base delay between attempts; it doubles per attempt
	// and gets jitter (default 500ms). A Retry-After header takes precedence.
	RetryBackoff time.Duration
	// MaxRetryWait is the longest the client waits between two attempts of
	// one call (default 10s). When the server asks for a longer pause the
	// call returns at once, so the task queue can retry it later instead of
	// holding a worker.
	MaxRetryWait time.Duration
	// CoolDown is how long the fleet sends no call to the endpoint after
	// it answered 401, 403 or insufficient_quota (default 30s); it takes a
	// limiter that implements CoolDowner, such as the fleet's Redis one.
	CoolDown time.Duration
	// OmitBodies leaves CallRecord.Request and Response empty; the prompt
	// hash, tokens and status are still recorded (default false: bodies are
	// recorded, which allows replaying a review).
	OmitBodies bool
}

// ConfigFromEnv reads OPENAI_BASE_URL and OPENAI_API_KEY. When only the key
// is set the base URL defaults to DefaultOpenAIBaseURL.
func ConfigFromEnv() Config {
	cfg := Config{
		BaseURL: strings.TrimSpace(os.Getenv("OPENAI_BASE_URL")),
		APIKey:  strings.TrimSpace(os.Getenv("OPENAI_API_KEY")),
	}
	if cfg.BaseURL == "" && cfg.APIKey != "" {
		cfg.BaseURL = DefaultOpenAIBaseURL
	}
	return cfg
}

func (c Config) withDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.RetryBackoff == 0 {
		c.RetryBackoff = DefaultRetryBackoff
	}
	if c.CoolDown == 0 {
		c.CoolDown = DefaultCoolDown
	}
	if c.MaxRetryWait == 0 {
		c.MaxRetryWait = DefaultMaxRetryWait
	}
	return c
}

// Option customises a Client.
type Option func(*options)

type options struct {
	endpoints  []Endpoint
	limiter    Limiter
	recorder   Recorder
	budget     Budget
	httpClient *http.Client
	tracer     trace.Tracer
	logger     *slog.Logger
}

// WithLimiter makes every HTTP attempt wait on l first.
func WithLimiter(l Limiter) Option { return func(o *options) { o.limiter = l } }

// WithRecorder stores a CallRecord for every HTTP attempt and every call
// refused before reaching the network.
func WithRecorder(r Recorder) Option { return func(o *options) { o.recorder = r } }

// WithBudget makes every HTTP attempt reserve budget for the review first.
func WithBudget(b Budget) Option { return func(o *options) { o.budget = b } }

// WithHTTPClient replaces the HTTP client built from Config. Config.Timeout
// still bounds each request through its context.
func WithHTTPClient(h *http.Client) Option { return func(o *options) { o.httpClient = h } }

// WithTracer opens a span per call carrying the stage, model and tokens.
func WithTracer(t trace.Tracer) Option { return func(o *options) { o.tracer = t } }

// WithLogger sets where problems that do not fail a call are reported, such
// as a recorder that could not store a record (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }
