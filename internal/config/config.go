// Package config defines reviewfleet's configuration: a YAML file, then
// environment variables on top. Every key can be set as
// REVIEWFLEET_<SECTION>_<KEY> (for example REVIEWFLEET_HARNESS_EVAL_ENABLED=false);
// connections also read the conventional DATABASE_URL, REDIS_URL,
// OPENAI_BASE_URL and OPENAI_API_KEY.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// Config is the whole configuration. The YAML keys are the field tags; the
// defaults are those of Default.
type Config struct {
	// DatabaseURL is the Postgres connection string. Empty: a local cluster
	// is started from the machine's PostgreSQL binaries.
	DatabaseURL string `yaml:"database_url"`
	// RedisURL is the Redis connection string (redis://host:port/db). Empty:
	// an in-process Redis and an in-process worker are used.
	RedisURL string `yaml:"redis_url"`

	LLM       LLM       `yaml:"llm"`
	Harness   Harness   `yaml:"harness"`
	Intent    Intent    `yaml:"intent"`
	Manager   Manager   `yaml:"manager"`
	Expert    Expert    `yaml:"expert"`
	Prompts   Prompts   `yaml:"prompts"`
	Database  Database  `yaml:"database"`
	Worker    Worker    `yaml:"worker"`
	Scheduler Scheduler `yaml:"scheduler"`
	Telemetry Telemetry `yaml:"telemetry"`
	Snapshot  Snapshot  `yaml:"snapshot"`
	Fleet     Fleet     `yaml:"fleet"`
	Bulk      Bulk      `yaml:"bulk"`
	GitHub    GitHub    `yaml:"github"`
	Webhook   Webhook   `yaml:"webhook"`
	Console   Console   `yaml:"console"`
	// Evaluation configures `reviewfleet eval`.
	Evaluation Evaluation `yaml:"evaluation"`
	Retention  Retention  `yaml:"retention"`
	// Feedback configures reading the reactions, replies and merges on
	// posted reviews (internal/feedback).
	Feedback Feedback `yaml:"feedback"`

	// RepoConfig governs the .reviewfleet.yaml files of reviewed repositories.
	RepoConfig RepoConfig `yaml:"repo_config"`
}

// RepoConfig governs the repository configuration files (.reviewfleet.yaml)
// read at the reviewed revision.
type RepoConfig struct {
	// Enabled applies them (default true). They come with the change, so a
	// change can ignore its own files or turn risk types off; set false
	// where the people who open changes must not shape their review.
	Enabled bool `yaml:"enabled"`
}

// Evaluation configures how `reviewfleet eval` matches a review's findings
// to a dataset's golden issues.
type Evaluation struct {
	// JudgeModel is the model asked whether a finding the line window left
	// unmatched describes a still-unmatched golden issue (default empty: no
	// judge, the window alone matches; --judge-model).
	JudgeModel string `yaml:"judge_model"`
	// Window is how many lines apart a finding and a golden issue in the
	// same file may be and still match (default 3; 0 = the ranges must
	// overlap; --window).
	Window int `yaml:"window"`
}

// Fleet configures admission control for the whole fleet.
type Fleet struct {
	// MaxRunningReviews is an optional ceiling on the reviews running at
	// once fleet-wide; the rest wait as queued, their deadline not yet
	// counting (default 0 = no ceiling). Without it, reviews are admitted
	// by the fleet's capacity: while the live workers' slots have room
	// and the provider does not ask the fleet to wait.
	MaxRunningReviews int `yaml:"max_running_reviews"`
}

// Bulk configures batch submission.
type Bulk struct {
	// MaxRunningPerBatch is an optional cap on the running reviews of one
	// batch (default 0 = no cap; --max-running per batch). Without it a
	// batch alone fills the fleet, and batches share it evenly.
	MaxRunningPerBatch int `yaml:"max_running_per_batch"`
	// SubmitConcurrency is how many entries are prepared and stored at once
	// (default 4).
	SubmitConcurrency int `yaml:"submit_concurrency"`
}

// GitHub configures listing an organisation's pull requests. The token is
// read from GITHUB_TOKEN and never stored.
type GitHub struct {
	// APIURL is the REST API base URL (default https://api.github.com/; for
	// GitHub Enterprise https://HOST/api/v3/; env GITHUB_API_URL).
	APIURL string `yaml:"api_url"`
	// AppID and AppPrivateKeyFile authenticate as a GitHub App instead of
	// GITHUB_TOKEN: a JWT signed with the key (PEM, a mounted secret) buys
	// an installation token for each repository (default 0 and "": use
	// GITHUB_TOKEN).
	AppID             int64  `yaml:"app_id"`
	AppPrivateKeyFile string `yaml:"app_private_key_file"`
	// InstallationID is the App installation to use (default 0: the
	// installation of each pull request's repository, looked up).
	InstallationID int64 `yaml:"installation_id"`
	// MaxRetries is how many times a request GitHub answers with a
	// secondary rate limit (403 or 429 with Retry-After) is retried after
	// waiting (default 3); MaxRetryWait caps one wait (default 60s).
	MaxRetries   int           `yaml:"max_retries"`
	MaxRetryWait time.Duration `yaml:"max_retry_wait"`
}

// Webhook configures `reviewfleet serve`, which receives GitHub's
// pull_request events and submits their reviews to the fleet.
type Webhook struct {
	// Addr serves POST /webhook and nothing else: it faces GitHub, and so
	// the internet (default ":8090").
	Addr string `yaml:"addr"`
	// Secret checks X-Hub-Signature-256 (required by serve; env
	// REVIEWFLEET_WEBHOOK_SECRET or GITHUB_WEBHOOK_SECRET).
	Secret string `yaml:"secret" json:"-"` // never in a review's configuration snapshot
	// IgnorePaths skips a pull request all of whose changed files match
	// one of these globs (doublestar syntax, e.g. "docs/**"; default none).
	IgnorePaths []string `yaml:"ignore_paths"`
	// Post posts each review on its pull request when it ends (default false).
	Post bool `yaml:"post"`
	// AdminAddr serves /livez, /readyz and /metrics, for the probes and
	// Prometheus only (default ":8083"; empty disables).
	AdminAddr string `yaml:"admin_addr"`
	// MaxBodyBytes refuses larger payloads with 413 (default 25 MiB,
	// GitHub's own cap).
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// ReadConcurrency is how many request bodies are read (not yet
	// authenticated) at once; a request finding them all busy for three
	// seconds is answered 503 with Retry-After (default 4).
	ReadConcurrency int `yaml:"read_concurrency"`
	// MinBodyRate is the slowest, in bytes a second, a body holding one of
	// those read slots may arrive: it gets 2 s plus its bytes at this rate,
	// or its connection is cut and the slot freed (default 2 MiB/s).
	MinBodyRate int64 `yaml:"min_body_rate"`
	// ReplayWindow is how long a payload is remembered: the same body
	// under another X-GitHub-Delivery id is a duplicate, and an event
	// whose pull request was last updated longer ago is refused as stale
	// (default 72h, the age up to which GitHub redelivers).
	ReplayWindow time.Duration `yaml:"replay_window"`
}

// DefaultWebhookAdminAddr is webhook.admin_addr's default.
const DefaultWebhookAdminAddr = ":8083"

// Snapshot configures the workers' cache of repositories and head trees.
type Snapshot struct {
	// MaxBytes bounds the cache on disk (clones, exported trees, per-review
	// trees); the least recently used entries no review is using are
	// removed beyond it (default 2 GiB, half the Kubernetes emptyDir; 0 =
	// unbounded).
	MaxBytes int64 `yaml:"max_bytes"`
	// GitTokenFile is a file (a mounted secret) holding the token used to
	// fetch the remote repositories under GitTokenHosts.
	// REVIEWFLEET_GIT_TOKEN, when set, takes precedence. The token is given
	// to git through its environment, never stored in a URL, a remote or a
	// log (default: none).
	GitTokenFile string `yaml:"git_token_file"`
	// GitTokenHosts are the URL prefixes the git token belongs to
	// ("https://git.example.com/", "https://github.com/acme"; a bare host
	// means https): it is sent to a remote under one of them and to no
	// other, which is cloned anonymously. http:// is accepted for a
	// loopback host only (default: the configured GitHub's git host,
	// https://github.com/ for api.github.com; env
	// REVIEWFLEET_SNAPSHOT_GIT_TOKEN_HOSTS, comma-separated).
	GitTokenHosts []string `yaml:"git_token_hosts"`
	// AllowLoopbackHTTP accepts plain http:// repository URLs to a
	// loopback host (127.0.0.0/8, ::1, localhost) from manifests, webhooks
	// and pull requests: a local test git server. Other hosts need https
	// or ssh (default false; env REVIEWFLEET_SNAPSHOT_ALLOW_LOOPBACK_HTTP).
	AllowLoopbackHTTP bool `yaml:"allow_loopback_http"`
}

// LLM configures the OpenAI-compatible endpoint, models, limits and budgets.
type LLM struct {
	BaseURL string `yaml:"base_url"` // OPENAI_BASE_URL; required for real reviews
	APIKey  string `yaml:"api_key"`  // OPENAI_API_KEY
	// Model is the default model for every stage (default "gpt-4o-mini").
	Model string `yaml:"model"`
	// Per-stage models; empty means Model.
	IntentModel string `yaml:"intent_model"`
	VerifyModel string `yaml:"verify_model"`
	ExpertModel string `yaml:"expert_model"`
	EvalModel   string `yaml:"eval_model"`
	// Timeout bounds one HTTP request to the endpoint (default 120s).
	Timeout time.Duration `yaml:"timeout"`
	// MaxAttempts is how often one call is tried on 5xx / network errors (default 3).
	MaxAttempts int `yaml:"max_attempts"`
	// Temperature for every call (default 0.1).
	Temperature float64 `yaml:"temperature"`
	// RequestsPerMinute and TokensPerMinute limit each worker (0 = unlimited).
	RequestsPerMinute int `yaml:"requests_per_minute"`
	TokensPerMinute   int `yaml:"tokens_per_minute"`
	// FleetRequestsPerMinute and FleetTokensPerMinute are one quota shared
	// by every worker through Redis (0 = no fleet-wide limit).
	FleetRequestsPerMinute int `yaml:"fleet_requests_per_minute"`
	FleetTokensPerMinute   int `yaml:"fleet_tokens_per_minute"`
	// FleetBurst is how far ahead of the fleet quota's steady rate calls
	// may start (default 1s). A provider counting a sliding minute answers
	// 429 to a larger burst.
	FleetBurst time.Duration `yaml:"fleet_burst"`
	// CoolDown is how long no worker sends a call to the endpoint with the
	// same key after it answered 401, 403 or insufficient_quota (default
	// 30s); calls meanwhile fail at once with the provider's message.
	CoolDown time.Duration `yaml:"cool_down"`
	// Prices maps a model to its price in US dollars per million input and
	// output tokens, for the estimated cost of calls and reviews (default
	// empty: no cost is shown).
	Prices map[string]Price `yaml:"prices"`
	// Endpoints makes several OpenAI-compatible endpoints one pool (default
	// none: base_url alone is a pool of one). Calls are spread by weight;
	// one answering 401, 403 or insufficient_quota is left out for
	// cool_down and its calls go to the others.
	Endpoints []Endpoint `yaml:"endpoints"`
	// MaxCallsPerReview and MaxTokensPerReview cap one review's spend,
	// retries included (defaults 1,000 and 12,000,000; 0 = unlimited).
	// The review keeps the caps it was submitted with. The defaults cover
	// the largest change the benchmarks review (140 files): about 32 intent
	// chunks, 15 verify, 15 × 22 expert rounds and 15 eval calls, about 590
	// with repairs and retries, the expert rounds carrying most tokens.
	MaxCallsPerReview  int   `yaml:"max_calls_per_review"`
	MaxTokensPerReview int64 `yaml:"max_tokens_per_review"`
	// RecordExchanges stores request and reply bodies, each message once
	// in llm_messages, which enables replaying a review (default true).
	RecordExchanges bool `yaml:"record_exchanges"`
	// Recorded marks a review whose replies come from a recorded exchange
	// (the offline demo); not a configuration key.
	Recorded bool `yaml:"-"`
}

// Endpoint is one member of the llm.endpoints pool.
type Endpoint struct {
	Name      string `yaml:"name"`        // unique; recorded in llm_calls.endpoint
	BaseURL   string `yaml:"base_url"`    // e.g. https://api.openai.com/v1
	APIKeyEnv string `yaml:"api_key_env"` // the environment variable holding its key
	// Models maps the model a stage asks for to this endpoint's name for it.
	Models            map[string]string `yaml:"models"`
	RequestsPerMinute int               `yaml:"requests_per_minute"` // its own quota, shared by the fleet (0 = none)
	TokensPerMinute   int               `yaml:"tokens_per_minute"`
	Weight            int               `yaml:"weight"` // share of the calls (default 1)
}

// Price is a model's price in US dollars per million tokens.
type Price struct {
	Input  float64 `yaml:"input"`
	Output float64 `yaml:"output"`
}

// ModelFor returns the model configured for a stage.
func (l LLM) ModelFor(stage review.Stage) string {
	m := map[review.Stage]string{
		review.StageIntent: l.IntentModel, review.StageVerify: l.VerifyModel,
		review.StageExpert: l.ExpertModel, review.StageEval: l.EvalModel,
	}[stage]
	if m == "" {
		return l.Model
	}
	return m
}

// Harness holds the pipeline's toggles and confidence rules.
type Harness struct {
	VerifyEnabled             bool `yaml:"verify_enabled"`              // default true
	EvalEnabled               bool `yaml:"eval_enabled"`                // default true
	ProgressiveContextEnabled bool `yaml:"progressive_context_enabled"` // default true
	// VerifyConfidenceFloor caps the confidence of unanchored findings (default 0.3).
	VerifyConfidenceFloor float64 `yaml:"verify_confidence_floor"`
	// ExpertMinConfidence: findings below it after verify skip the expert
	// and get a "skipped" verdict (default 0: every finding the manager kept
	// is investigated, as the seed harness does; raise it to save tokens).
	ExpertMinConfidence float64 `yaml:"expert_min_confidence"`
	// EvalMinConfidence: findings below it after the expert are not
	// cross-examined and get no eval row (default 0: every finding the
	// expert confirmed or left inconclusive is).
	EvalMinConfidence float64 `yaml:"eval_min_confidence"`
	// ConfidenceThreshold: the report keeps findings at or above it (default 0.6).
	ConfidenceThreshold float64 `yaml:"confidence_threshold"`
	// ConfidenceOverrides sets a threshold per risk type (e.g. static: 0.8).
	ConfidenceOverrides map[string]float64 `yaml:"confidence_overrides"`
	// Calibrate lets a pull request's repository outcomes (resolved and
	// dismissed findings) move each risk type's threshold within bounds;
	// the report states the threshold used and why (default false).
	Calibrate bool `yaml:"calibrate"`
}

// Feedback configures the feedback sync: reading reactions, replies and
// merges on the reviews the fleet posted.
type Feedback struct {
	// SyncInterval is how often the scheduler syncs every repository
	// posted on (default 15m; 0 disables; off without GitHub credentials).
	SyncInterval time.Duration `yaml:"sync_interval"`
	// MaxPullRequests bounds the pull requests one pass syncs per
	// repository; the next pass resumes after them (default 50).
	MaxPullRequests int `yaml:"max_pull_requests"`
	// MinRateRemaining stops a pass when GitHub says fewer requests than
	// this remain in the hour; the next pass resumes (default 500).
	MinRateRemaining int `yaml:"min_rate_remaining"`
}

// Intent configures diff preparation and the intent stage.
type Intent struct {
	// ChunkFilesThreshold and ChunkCharsThreshold switch to chunked intent
	// (several files per call, diff only) at or above them (defaults 15 and 150,000).
	ChunkFilesThreshold int `yaml:"chunk_files_threshold"`
	ChunkCharsThreshold int `yaml:"chunk_chars_threshold"`
	// ChunkMaxFiles and ChunkMaxChars bound one chunk (defaults 6 and 40,000).
	ChunkMaxFiles int `yaml:"chunk_max_files"`
	ChunkMaxChars int `yaml:"chunk_max_chars"`
	// MaxFileDiffChars: a file whose diff is larger is skipped as too_large (default 100,000).
	MaxFileDiffChars int `yaml:"max_file_diff_chars"`
	// MaxFileBytes: head content larger than this is not stored (default 1 MiB).
	MaxFileBytes int `yaml:"max_file_bytes"`
	// Ignore lists extra globs (with **) of files never reviewed.
	Ignore []string `yaml:"ignore"`
}

// Manager configures the deterministic triage between intent and verify.
type Manager struct {
	AnchorWindow      int                `yaml:"anchor_window"`       // default 5
	MergeSimilarity   float64            `yaml:"merge_similarity"`    // default 0.5
	MergeLineDistance int                `yaml:"merge_line_distance"` // default 3
	MaxPerFile        int                `yaml:"max_per_file"`        // default 5
	MaxPerRiskType    int                `yaml:"max_per_risk_type"`   // default 8
	MaxTotal          int                `yaml:"max_total"`           // default 15
	TypeWeights       map[string]float64 `yaml:"type_weights"`        // default: see stages/manager
	SeverityWeights   map[string]float64 `yaml:"severity_weights"`    // default: see stages/manager
}

// Expert configures the expert agent runtime.
type Expert struct {
	MaxRounds            int           `yaml:"max_rounds"`               // default 22
	SearchBudget         int           `yaml:"search_budget"`            // default 12
	GracefulExitRounds   int           `yaml:"graceful_exit_rounds"`     // default 2
	RepeatThreshold      int           `yaml:"repeat_threshold"`         // default 3
	MaxMissingCompletion int           `yaml:"max_missing_completion"`   // default 3
	MaxToolCallsPerRound int           `yaml:"max_tool_calls_per_round"` // default 8: further calls of one reply get a tool error
	AcceptFailFactor     float64       `yaml:"accept_fail_factor"`       // default 0.5
	ConvergenceRounds    int           `yaml:"convergence_rounds"`       // default 3: rounds with nothing new → convergence nudge, and the phase rules
	BudgetWarningAt      float64       `yaml:"budget_warning_at"`        // default 0.7: fraction of max_rounds that brings the budget warning
	ReflectionEvery      int           `yaml:"reflection_every"`         // default 6: rounds between reflection nudges
	ReadTimeout          time.Duration `yaml:"read_timeout"`             // default 5s: first time budget of read_file / list_dir
	ScanTimeout          time.Duration `yaml:"scan_timeout"`             // default 15s: first time budget of grep / find_symbol
	MaxToolTimeout       time.Duration `yaml:"max_tool_timeout"`         // default 60s: cap of the doubling after timeouts
	RunTimeout           time.Duration `yaml:"run_timeout"`              // default 5m
	// SnapshotDir caches head snapshots for the agent's tools (default: the OS cache dir).
	SnapshotDir string `yaml:"snapshot_dir"`
	// SandboxDeny lists globs of paths the agent's tools never read, list or
	// search, and that diff snapshots leave out (default empty: the built-in
	// list of .env*, keys and credential files; a list replaces it). .git is
	// always denied.
	SandboxDeny []string `yaml:"sandbox_deny"`
}

// Prompts configures where prompt overrides live.
type Prompts struct {
	// Dir holds files that replace the embedded prompts of the same name.
	Dir string `yaml:"dir"`
}

// Database configures the Postgres connection pool.
type Database struct {
	// MaxConns caps the pool (default 0: worker.concurrency plus
	// PoolHeadroom, enough for every task, the heartbeat and health checks).
	MaxConns int `yaml:"max_conns"`
	// StatementTimeout makes Postgres cancel a statement running longer
	// (default 30s; 0 = no limit). `migrate` runs without it.
	StatementTimeout time.Duration `yaml:"statement_timeout"`
}

// PoolHeadroom is what the default pool size adds to worker.concurrency.
const PoolHeadroom = 4

// PoolSize is the pool size the configuration asks for.
func (c Config) PoolSize() int {
	if c.Database.MaxConns > 0 {
		return c.Database.MaxConns
	}
	return c.Worker.Concurrency + PoolHeadroom
}

// Worker configures the asynq server.
type Worker struct {
	Concurrency int `yaml:"concurrency"` // default 8
	// TaskCheckInterval is the pause after a poll of the queues found
	// nothing (default 10ms; asynq's own default of 1s makes every hop
	// slow). With idle_poll_interval set, the poll after that waits for an
	// announced task, so a short pause costs no idle polling.
	TaskCheckInterval time.Duration `yaml:"task_check_interval"`
	// IdlePollInterval is how often a worker whose queues were all empty
	// polls them again when no new task was announced (default 1s; 0 polls
	// every task_check_interval). Tasks the fleet enqueues are announced
	// on a Redis channel and wake idle workers at once; retries asynq
	// moves to a queue itself wait up to this long.
	IdlePollInterval time.Duration `yaml:"idle_poll_interval"`
	MaxRetry         int           `yaml:"max_retry"` // default 4
	// ShutdownTimeout is how long a stopping worker lets its running
	// tasks finish before putting them back on their queues (default
	// 5m30s: expert.run_timeout's 5m and 30s more, so that no expert run
	// in flight is cut and started over elsewhere, as the Kubernetes
	// manifests have it). A second Ctrl-C or SIGTERM stops the worker at
	// once; its tasks then run again on another worker.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// HealthAddr serves /livez and /readyz (default ":8081"; empty
	// disables). When the default port is taken (a second worker on the
	// same host) the worker listens on a free port and logs which.
	HealthAddr string `yaml:"health_addr"`
	// HeartbeatInterval is ignored: a worker's heartbeat is asynq's
	// server state (every 5 s, 10 s TTL; package heartbeat). It is kept
	// so configuration files that set it still load.
	HeartbeatInterval time.Duration `yaml:"heartbeat_interval"`
	// HeartbeatTTL is ignored, like HeartbeatInterval.
	HeartbeatTTL time.Duration `yaml:"heartbeat_ttl"`
}

// DefaultHealthAddr is worker.health_addr's default.
const DefaultHealthAddr = ":8081"

// DefaultSchedulerHealthAddr is scheduler.health_addr's default.
const DefaultSchedulerHealthAddr = ":8082"

// Scheduler configures the reconciler.
type Scheduler struct {
	Interval      time.Duration `yaml:"interval"`       // default 10s
	RequeueAfter  time.Duration `yaml:"requeue_after"`  // default 30s: pending items older than this are checked against the queues
	ReviewTimeout time.Duration `yaml:"review_timeout"` // default 30m: past it a review fails
	// BatchSize is how many ledger items one reconcile query reads and one
	// Redis pipeline checks (default 2000).
	BatchSize int `yaml:"batch_size"`
	// EnqueueParallelism is how many enqueues run at once while restoring
	// a batch (default 16).
	EnqueueParallelism int `yaml:"enqueue_parallelism"`
	// HealthAddr serves the scheduler's /livez, /readyz and /metrics
	// (default ":8082", a free port when that one is taken; empty
	// disables).
	HealthAddr string `yaml:"health_addr"`
	// Schedules are bulk reviews run on a cron schedule (default none).
	Schedules []Schedule `yaml:"schedules"`
}

// Schedule is one scheduled bulk review: a manifest or a GitHub org.
type Schedule struct {
	Name       string `yaml:"name"`        // unique; names the batches it creates
	Cron       string `yaml:"cron"`        // e.g. "0 2 * * *" (UTC)
	Manifest   string `yaml:"manifest"`    // a JSON Lines manifest file, or
	GitHubOrg  string `yaml:"github_org"`  // every open pull request of this org
	RepoFilter string `yaml:"repo_filter"` // glob over owner/name (with github_org)
}

// Telemetry configures tracing.
type Telemetry struct {
	// Exporter is "none" (default), "console" (alias "stdout": JSON on
	// stderr) or "otlp" (configured by OTEL_EXPORTER_OTLP_*). The standard
	// OTEL_TRACES_EXPORTER variable, when set, takes precedence.
	Exporter    string `yaml:"exporter"`
	ServiceName string `yaml:"service_name"` // default "reviewfleet"
}

// Default returns the configuration with every default filled in.
func Default() Config {
	return Config{
		LLM: LLM{
			Model: "gpt-4o-mini", Timeout: 120 * time.Second, MaxAttempts: 3, Temperature: 0.1,
			MaxCallsPerReview: 1000, MaxTokensPerReview: 12_000_000, RecordExchanges: true,
			FleetBurst: time.Second, CoolDown: 30 * time.Second, Prices: map[string]Price{}, Endpoints: []Endpoint{},
		},
		Harness: Harness{
			VerifyEnabled: true, EvalEnabled: true, ProgressiveContextEnabled: true,
			VerifyConfidenceFloor: 0.3, ExpertMinConfidence: 0, EvalMinConfidence: 0,
			ConfidenceThreshold: 0.6, ConfidenceOverrides: map[string]float64{},
		},
		Intent: Intent{
			ChunkFilesThreshold: 15, ChunkCharsThreshold: 150_000, ChunkMaxFiles: 6,
			ChunkMaxChars: 40_000, MaxFileDiffChars: 100_000, MaxFileBytes: 1 << 20, Ignore: []string{},
		},
		Manager: Manager{
			AnchorWindow: 5, MergeSimilarity: 0.5, MergeLineDistance: 3,
			MaxPerFile: 5, MaxPerRiskType: 8, MaxTotal: 15,
			TypeWeights: map[string]float64{}, SeverityWeights: map[string]float64{},
		},
		Expert: Expert{
			MaxRounds: 22, SearchBudget: 12, GracefulExitRounds: 2, RepeatThreshold: 3,
			MaxMissingCompletion: 3, MaxToolCallsPerRound: 8, AcceptFailFactor: 0.5, RunTimeout: 5 * time.Minute,
			ConvergenceRounds: 3, BudgetWarningAt: 0.7, ReflectionEvery: 6,
			ReadTimeout: 5 * time.Second, ScanTimeout: 15 * time.Second, MaxToolTimeout: time.Minute,
			SandboxDeny: []string{},
		},
		Worker: Worker{
			Concurrency: 8, TaskCheckInterval: 10 * time.Millisecond, IdlePollInterval: time.Second, MaxRetry: 4,
			ShutdownTimeout: 330 * time.Second, HealthAddr: DefaultHealthAddr,
			HeartbeatInterval: 2 * time.Second, HeartbeatTTL: 10 * time.Second,
		},
		Database: Database{StatementTimeout: 30 * time.Second},
		Scheduler: Scheduler{
			Interval: 10 * time.Second, RequeueAfter: 30 * time.Second, ReviewTimeout: 30 * time.Minute,
			BatchSize: 2000, EnqueueParallelism: 16, HealthAddr: DefaultSchedulerHealthAddr,
		},
		Telemetry: Telemetry{Exporter: "none", ServiceName: "reviewfleet"},
		Snapshot:  Snapshot{MaxBytes: 2 << 30, GitTokenHosts: []string{}},
		Fleet:     Fleet{},
		Bulk:      Bulk{SubmitConcurrency: 4},
		GitHub:    GitHub{APIURL: "https://api.github.com/", MaxRetries: 3, MaxRetryWait: time.Minute},
		Webhook: Webhook{Addr: ":8090", IgnorePaths: []string{}, AdminAddr: DefaultWebhookAdminAddr,
			MaxBodyBytes: 25 << 20, ReadConcurrency: 4, MinBodyRate: 2 << 20, ReplayWindow: 72 * time.Hour},
		Console: defaultConsole(),

		Evaluation: Evaluation{Window: 3},
		Retention:  Retention{OlderThan: "90d", BatchSize: 1000},
		Feedback:   Feedback{SyncInterval: 15 * time.Minute, MaxPullRequests: 50, MinRateRemaining: 500},

		RepoConfig: RepoConfig{Enabled: true},
	}
}

// Load reads the YAML file at path (if path is not empty) over the
// defaults, then applies the environment, then validates.
func Load(path string) (Config, error) {
	return load(path, os.LookupEnv)
}

// LoadEnv is Load with the environment read through lookup (os.LookupEnv
// for Load), so a caller can run with variables of its own.
func LoadEnv(path string, lookup func(string) (string, bool)) (Config, error) {
	return load(path, lookup)
}

func load(path string, env func(string) (string, bool)) (Config, error) {
	cfg := Default()
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return Config{}, fmt.Errorf("read config: %w", err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
			return Config{}, fmt.Errorf("parse config %s:\n  %w", path, explainYAML(data, err))
		}
	}
	if err := applyEnv(&cfg, env); err != nil {
		return Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}
