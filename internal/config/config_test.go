package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestDefaultsValidate(t *testing.T) {
	t.Parallel()
	if err := Default().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestExampleFileDocumentsEveryKeyWithItsDefault(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "..", "config.example.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Keys() {
		leaf := k.Path[strings.LastIndex(k.Path, ".")+1:]
		if !strings.Contains(string(data), leaf+":") {
			t.Errorf("config.example.yaml does not document %s", k.Path)
		}
	}
	got, err := load(path, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, Default()) {
		t.Errorf("config.example.yaml differs from the defaults:\n got %+v\nwant %+v", got, Default())
	}
}

func TestEnvironmentOverrides(t *testing.T) {
	t.Parallel()
	cfg, err := load("", env(map[string]string{
		"REVIEWFLEET_HARNESS_EVAL_ENABLED":            "false",
		"REVIEWFLEET_WORKER_TASK_CHECK_INTERVAL":      "25ms",
		"REVIEWFLEET_INTENT_IGNORE":                   "docs/**, *.snap",
		"REVIEWFLEET_HARNESS_CONFIDENCE_OVERRIDES":    "static=0.8,authorization=0.5",
		"REVIEWFLEET_MANAGER_MAX_TOTAL":               "20",
		"DATABASE_URL":                                "postgres://x",
		"OPENAI_BASE_URL":                             "http://llm",
		"REVIEWFLEET_LLM_BASE_URL":                    "http://wins",
		"REVIEWFLEET_HARNESS_VERIFY_CONFIDENCE_FLOOR": "0.25",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Harness.EvalEnabled || cfg.Worker.TaskCheckInterval != 25*time.Millisecond ||
		len(cfg.Intent.Ignore) != 2 || cfg.Intent.Ignore[1] != "*.snap" ||
		cfg.Harness.ConfidenceOverrides["static"] != 0.8 || cfg.Manager.MaxTotal != 20 ||
		cfg.DatabaseURL != "postgres://x" || cfg.LLM.BaseURL != "http://wins" ||
		cfg.Harness.VerifyConfidenceFloor != 0.25 {
		t.Fatalf("overrides not applied: %+v", cfg)
	}
}

func TestBadValuesAreReportedWithTheirKey(t *testing.T) {
	t.Parallel()
	cases := map[string]map[string]string{
		"REVIEWFLEET_HARNESS_EVAL_ENABLED":         {"REVIEWFLEET_HARNESS_EVAL_ENABLED": "maybe"},
		"REVIEWFLEET_WORKER_TASK_CHECK_INTERVAL":   {"REVIEWFLEET_WORKER_TASK_CHECK_INTERVAL": "fast"},
		"harness.confidence_threshold":             {"REVIEWFLEET_HARNESS_CONFIDENCE_THRESHOLD": "1.5"},
		"harness.confidence_overrides":             {"REVIEWFLEET_HARNESS_CONFIDENCE_OVERRIDES": "nosuchrisk=0.5"},
		"REVIEWFLEET_HARNESS_CONFIDENCE_OVERRIDES": {"REVIEWFLEET_HARNESS_CONFIDENCE_OVERRIDES": "static"},
		"expert.sandbox_deny":                      {"REVIEWFLEET_EXPERT_SANDBOX_DENY": ".env*,[z"},
	}
	for want, e := range cases {
		_, err := load("", env(e))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: error %v does not name %s", e, err, want)
		}
	}
}

func TestUnknownYAMLKeyIsAnError(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte("harness:\n  eval_enabeld: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := load(p, env(nil)); err == nil || !strings.Contains(err.Error(), "eval_enabeld") {
		t.Fatalf("a typo in a key must be reported, got %v", err)
	}
}

func TestModelFor(t *testing.T) {
	t.Parallel()
	l := LLM{Model: "m", EvalModel: "e"}
	if l.ModelFor("eval") != "e" || l.ModelFor("intent") != "m" {
		t.Fatal("per-stage model not chosen")
	}
}

func TestSchedulesFromEnvironment(t *testing.T) {
	t.Parallel()
	cfg, err := load("", env(map[string]string{
		"REVIEWFLEET_SCHEDULER_SCHEDULES": `[{"name": "nightly", "cron": "0 2 * * *", "github_org": "acme", "repo_filter": "acme/*"}]`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := []Schedule{{Name: "nightly", Cron: "0 2 * * *", GitHubOrg: "acme", RepoFilter: "acme/*"}}
	if !reflect.DeepEqual(cfg.Scheduler.Schedules, want) {
		t.Fatalf("schedules %+v", cfg.Scheduler.Schedules)
	}
	_, err = load("", env(map[string]string{
		"REVIEWFLEET_SCHEDULER_SCHEDULES": `[{"name": "a", "cron": "every night", "manifest": "m", "github_org": "o"}, {"name": "a", "cron": "@daily"}]`,
	}))
	for _, msg := range []string{`"a": cron "every night"`, "exactly one of manifest and github_org", "the name is used twice"} {
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("invalid schedules: want %q in %v", msg, err)
		}
	}
}

func TestEndpointsAndPricesFromEnvAndValidation(t *testing.T) {
	cfg := Default()
	env := map[string]string{
		"REVIEWFLEET_LLM_ENDPOINTS": `[{name: a, base_url: "http://a/v1", api_key_env: A_KEY, weight: 2}, {name: a, base_url: "http://b/v1"}]`,
		"REVIEWFLEET_LLM_PRICES":    `{m: {input: 0.15, output: 0.6}}`,
	}
	if err := applyEnv(&cfg, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if len(cfg.LLM.Endpoints) != 2 || cfg.LLM.Endpoints[0].Weight != 2 || cfg.LLM.Prices["m"].Output != 0.6 {
		t.Fatalf("parsed %+v %+v", cfg.LLM.Endpoints, cfg.LLM.Prices)
	}
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "llm.endpoints") {
		t.Errorf("duplicate endpoint names: %v", err)
	}
}
