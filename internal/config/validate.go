package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/credscope"
	"github.com/reviewfleet/reviewfleet/internal/diff"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// Validate reports every invalid value at once, each with the key to fix.
func (c Config) Validate() error {
	var errs []string
	bad := func(key, format string, args ...any) {
		errs = append(errs, key+": "+fmt.Sprintf(format, args...))
	}
	unit := func(key string, v float64) {
		if v < 0 || v > 1 {
			bad(key, "must be between 0 and 1, got %v", v)
		}
	}
	unit("harness.verify_confidence_floor", c.Harness.VerifyConfidenceFloor)
	unit("harness.expert_min_confidence", c.Harness.ExpertMinConfidence)
	unit("harness.eval_min_confidence", c.Harness.EvalMinConfidence)
	unit("harness.confidence_threshold", c.Harness.ConfidenceThreshold)
	if c.Evaluation.Window < 0 {
		bad("evaluation.window", "must not be negative, got %d", c.Evaluation.Window)
	}
	for k, v := range c.Harness.ConfidenceOverrides {
		if _, err := review.ParseRiskType(k); err != nil {
			bad("harness.confidence_overrides", "%v", err)
		}
		unit("harness.confidence_overrides."+k, v)
	}
	for k := range c.Manager.TypeWeights {
		if _, err := review.ParseRiskType(k); err != nil {
			bad("manager.type_weights", "%v", err)
		}
	}
	for k := range c.Manager.SeverityWeights {
		if _, err := review.ParseSeverity(k); err != nil {
			bad("manager.severity_weights", "%v", err)
		}
	}
	positive := func(key string, v int) {
		if v <= 0 {
			bad(key, "must be positive, got %d", v)
		}
	}
	positive("intent.chunk_files_threshold", c.Intent.ChunkFilesThreshold)
	positive("intent.chunk_chars_threshold", c.Intent.ChunkCharsThreshold)
	positive("intent.chunk_max_files", c.Intent.ChunkMaxFiles)
	positive("intent.chunk_max_chars", c.Intent.ChunkMaxChars)
	positive("intent.max_file_diff_chars", c.Intent.MaxFileDiffChars)
	positive("worker.concurrency", c.Worker.Concurrency)
	positive("scheduler.batch_size", c.Scheduler.BatchSize)
	positive("scheduler.enqueue_parallelism", c.Scheduler.EnqueueParallelism)
	positive("webhook.read_concurrency", c.Webhook.ReadConcurrency)
	c.Console.validate(bad)
	if c.Webhook.MinBodyRate <= 0 {
		bad("webhook.min_body_rate", "must be positive (bytes a second), got %d", c.Webhook.MinBodyRate)
	}
	if c.Webhook.MaxBodyBytes <= 0 {
		bad("webhook.max_body_bytes", "must be positive, got %d", c.Webhook.MaxBodyBytes)
	}
	if c.Webhook.ReplayWindow <= 0 {
		bad("webhook.replay_window", "must be positive, got %s", c.Webhook.ReplayWindow)
	}
	if c.Database.MaxConns < 0 {
		bad("database.max_conns", "must not be negative, got %d", c.Database.MaxConns)
	}
	if c.Database.StatementTimeout < 0 {
		bad("database.statement_timeout", "must not be negative, got %s", c.Database.StatementTimeout)
	}
	positive("expert.max_rounds", c.Expert.MaxRounds)
	positive("expert.max_tool_calls_per_round", c.Expert.MaxToolCallsPerRound)
	unit("expert.budget_warning_at", c.Expert.BudgetWarningAt)
	if f := c.Expert.AcceptFailFactor; f <= 0 || f > 1 {
		bad("expert.accept_fail_factor", "must be above 0 and at most 1, got %v", f)
	}
	for _, g := range c.Expert.SandboxDeny {
		if err := diff.CheckGlob(g); err != nil {
			bad("expert.sandbox_deny", "%v", err)
		}
	}
	if c.Snapshot.MaxBytes < 0 {
		bad("snapshot.max_bytes", "must not be negative (0 = unbounded), got %d", c.Snapshot.MaxBytes)
	}
	if _, err := credscope.ParseSet(c.Snapshot.GitTokenHosts); err != nil {
		bad("snapshot.git_token_hosts", "%v", err)
	}
	if c.Manager.AnchorWindow < 0 {
		bad("manager.anchor_window", "must not be negative, got %d", c.Manager.AnchorWindow)
	}
	if c.Worker.TaskCheckInterval <= 0 {
		bad("worker.task_check_interval", "must be positive, got %s", c.Worker.TaskCheckInterval)
	}
	if c.Worker.MaxRetry < 0 {
		bad("worker.max_retry", "must not be negative, got %d", c.Worker.MaxRetry)
	}
	if c.Scheduler.Interval <= 0 || c.Scheduler.ReviewTimeout <= 0 {
		bad("scheduler", "interval and review_timeout must be positive")
	}
	nonNegative := func(key string, v int) {
		if v < 0 {
			bad(key, "must not be negative, got %d", v)
		}
	}
	nonNegative("fleet.max_running_reviews", c.Fleet.MaxRunningReviews)
	nonNegative("bulk.max_running_per_batch", c.Bulk.MaxRunningPerBatch)
	positive("bulk.submit_concurrency", c.Bulk.SubmitConcurrency)
	positive("retention.batch_size", c.Retention.BatchSize)
	if _, err := ParseAge(c.Retention.OlderThan); err != nil {
		bad("retention.older_than", "%v", err)
	}
	for _, msg := range validateSchedules(c.Scheduler.Schedules) {
		bad("scheduler.schedules", "%s", msg)
	}
	if c.LLM.FleetBurst < 0 {
		bad("llm.fleet_burst", "must not be negative, got %s", c.LLM.FleetBurst)
	}
	if c.LLM.CoolDown < 0 {
		bad("llm.cool_down", "must not be negative, got %s", c.LLM.CoolDown)
	}
	names := map[string]bool{}
	for i, e := range c.LLM.Endpoints {
		switch {
		case e.Name == "" || names[e.Name]:
			bad("llm.endpoints", "entry %d: name must be set and unique", i+1)
		case !strings.HasPrefix(e.BaseURL, "http://") && !strings.HasPrefix(e.BaseURL, "https://"):
			bad("llm.endpoints", "%s: base_url must be an http(s) URL, got %q", e.Name, e.BaseURL)
		case e.Weight < 0 || e.RequestsPerMinute < 0 || e.TokensPerMinute < 0:
			bad("llm.endpoints", "%s: weight and quotas must not be negative", e.Name)
		}
		names[e.Name] = true
	}
	for model, p := range c.LLM.Prices {
		if p.Input < 0 || p.Output < 0 {
			bad("llm.prices", "model %q: prices must not be negative", model)
		}
	}
	if c.LLM.Model == "" {
		bad("llm.model", "must not be empty")
	}
	if c.Expert.RunTimeout <= 0 {
		bad("expert.run_timeout", "must be positive, got %s", c.Expert.RunTimeout)
	} else if c.Scheduler.ReviewTimeout > 0 && c.Expert.RunTimeout >= c.Scheduler.ReviewTimeout {
		bad("expert.run_timeout", "must be below scheduler.review_timeout (%s), got %s: no expert run could finish inside a review",
			c.Scheduler.ReviewTimeout, c.Expert.RunTimeout)
	}
	if c.Worker.IdlePollInterval < 0 {
		bad("worker.idle_poll_interval", "must not be negative, got %s", c.Worker.IdlePollInterval)
	}
	if c.Worker.ShutdownTimeout < 0 {
		bad("worker.shutdown_timeout", "must not be negative, got %s", c.Worker.ShutdownTimeout)
	}
	switch c.Telemetry.Exporter {
	case "none", "stdout", "console", "otlp", "":
	default:
		bad("telemetry.exporter", "must be none, console (alias stdout) or otlp, got %q", c.Telemetry.Exporter)
	}
	if len(errs) > 0 {
		return errors.New("invalid configuration:\n  " + strings.Join(errs, "\n  "))
	}
	return nil
}

// Warnings lists settings that are valid but probably not what the operator
// wants, each naming its keys.
func (c Config) Warnings() []string {
	var out []string
	if c.Expert.RunTimeout > c.Worker.ShutdownTimeout {
		out = append(out, fmt.Sprintf("expert.run_timeout (%s) is above worker.shutdown_timeout (%s): an expert run "+
			"still going when a worker stops is cancelled and starts over on another worker (it is not failed "+
			"and uses no attempt); see RELIABILITY.md for sizing it against terminationGracePeriodSeconds",
			c.Expert.RunTimeout, c.Worker.ShutdownTimeout))
	}
	return out
}
