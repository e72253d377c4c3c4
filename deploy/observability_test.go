package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// fleetMetrics are the metric families the worker and the scheduler serve on
// /metrics, with their label names: the dashboard and the alert rules may
// use these and nothing else (besides Prometheus' own up).
var fleetMetrics = map[string][]string{
	"reviewfleet_reviews_finished_total":    {"status"},
	"reviewfleet_reviews":                   {"status"},
	"reviewfleet_stage_items_total":         {"stage", "outcome"},
	"reviewfleet_stage_duration_seconds":    {"stage"},
	"reviewfleet_task_queue_wait_seconds":   {"stage"},
	"reviewfleet_llm_calls_total":           {"stage", "model", "status"},
	"reviewfleet_llm_tokens_total":          {"stage", "model", "direction"},
	"reviewfleet_llm_cost_usd_total":        {"stage", "model"},
	"reviewfleet_llm_limiter_wait_seconds":  {"scope"},
	"reviewfleet_llm_rate_limited_total":    {"stage", "model"},
	"reviewfleet_reconciler_restored_total": {"reason"},
	// asynq's x/metrics collector: per-state counts are in
	// asynq_tasks_enqueued_total (a gauge despite its name); the size has
	// no state label.
	"asynq_tasks_enqueued_total":            {"queue", "state"},
	"asynq_queue_size":                      {"queue"},
	"asynq_queue_memory_usage_approx_bytes": {"queue"},
	"asynq_queue_latency_seconds":           {"queue"},
	"asynq_tasks_processed_total":           {"queue"},
	"asynq_tasks_failed_total":              {"queue"},
	"asynq_queue_paused_total":              {"queue"},
}

// histograms are the families exposed as _bucket, _sum and _count series.
var histograms = []string{
	"reviewfleet_stage_duration_seconds", "reviewfleet_task_queue_wait_seconds", "reviewfleet_llm_limiter_wait_seconds",
}

var (
	metricName = regexp.MustCompile(`\b(?:reviewfleet|asynq)_[a-z_]+\b`)
	// labelUse finds label names in matchers ({x="…"}) and in by/without
	// clauses.
	matcherBlock = regexp.MustCompile(`\{([^}]*)\}`)
	matcherName  = regexp.MustCompile(`([a-z_]+)\s*(?:=~|!~|!=|=)`)
	groupingList = regexp.MustCompile(`\b(?:by|without)\s*\(([^)]*)\)`)
)

// exprMetrics returns the fleet metric families a PromQL expression uses, and
// an error message for each name or label outside fleetMetrics.
func exprMetrics(expr string) (families []string, problems []string) {
	var labels []string
	for _, name := range metricName.FindAllString(expr, -1) {
		family := name
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && slices.Contains(histograms, base) {
				family = base
			}
		}
		ls, ok := fleetMetrics[family]
		if !ok {
			problems = append(problems, "unknown metric "+name)
			continue
		}
		families = append(families, family)
		labels = append(labels, ls...)
	}
	known := append([]string{"le", "job", "instance"}, labels...)
	check := func(l string) {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(known, l) {
			problems = append(problems, "label "+l+" belongs to none of the metrics used")
		}
	}
	for _, block := range matcherBlock.FindAllStringSubmatch(expr, -1) {
		for _, m := range matcherName.FindAllStringSubmatch(block[1], -1) {
			check(m[1])
		}
	}
	for _, g := range groupingList.FindAllStringSubmatch(expr, -1) {
		for _, l := range strings.Split(g[1], ",") {
			check(l)
		}
	}
	if strings.Count(expr, "(") != strings.Count(expr, ")") || strings.Count(expr, "{") != strings.Count(expr, "}") {
		problems = append(problems, "unbalanced brackets")
	}
	return families, problems
}

func TestComposeObservabilityProfile(t *testing.T) {
	t.Parallel()
	c := loadCompose(t)
	var names []string
	for name, s := range c.Services {
		if slices.Contains(s.Profiles, "observability") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	want := []string{"grafana", "jaeger", "otel-collector", "prometheus"}
	if !slices.Equal(names, want) {
		t.Fatalf("services of profile observability = %v, want %v", names, want)
	}
	if v := c.Services["jaeger"].Environment["COLLECTOR_OTLP_ENABLED"]; v != "true" {
		t.Errorf("jaeger COLLECTOR_OTLP_ENABLED = %q, want true", v)
	}
	// Every file a profile service mounts from the repository exists.
	for _, name := range names {
		for _, v := range c.Services[name].Volumes {
			src, _, _ := strings.Cut(v, ":")
			if !strings.HasPrefix(src, "./") {
				continue
			}
			if _, err := os.Stat(filepath.Join("..", src)); err != nil {
				t.Errorf("%s mounts %s: %v", name, src, err)
			}
		}
	}
	// The fleet exports traces to the collector when asked to.
	for _, name := range []string{"worker", "scheduler"} {
		env := c.Services[name].Environment
		if !strings.HasPrefix(env["OTEL_TRACES_EXPORTER"], "${OTEL_TRACES_EXPORTER") ||
			!strings.Contains(env["OTEL_EXPORTER_OTLP_ENDPOINT"], "otel-collector:4318") {
			t.Errorf("%s OTEL_* environment = %v, want the exporter passed through and the collector as endpoint", name, env)
		}
	}
	if got := c.Services["scheduler"].Environment["REVIEWFLEET_SCHEDULER_HEALTH_ADDR"]; got != ":8082" {
		t.Errorf("scheduler REVIEWFLEET_SCHEDULER_HEALTH_ADDR = %q, want :8082 (scraped by Prometheus)", got)
	}

	var prom struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName     string `yaml:"job_name"`
			MetricsPath string `yaml:"metrics_path"`
			DNSSD       []struct {
				Names []string `yaml:"names"`
				Type  string   `yaml:"type"`
				Port  int      `yaml:"port"`
			} `yaml:"dns_sd_configs"`
			Static []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	decodeYAMLFile(t, "prometheus/prometheus.yml", &prom, false)
	targets := map[string]string{}
	for _, sc := range prom.ScrapeConfigs {
		for _, d := range sc.DNSSD {
			for _, n := range d.Names {
				targets[n] = sc.MetricsPath
				if d.Port != 8081 {
					t.Errorf("job %s scrapes %s on port %d, want the worker health port 8081", sc.JobName, n, d.Port)
				}
			}
		}
		for _, s := range sc.Static {
			for _, tg := range s.Targets {
				targets[tg] = sc.MetricsPath
			}
		}
	}
	if targets["worker"] != "/metrics" || targets["scheduler:8082"] != "/metrics" || targets["serve:8083"] != "/metrics" {
		t.Errorf("Prometheus targets = %v, want every worker (DNS), scheduler:8082 and serve:8083 on /metrics", targets)
	}
	if !slices.Contains(prom.RuleFiles, "/etc/prometheus/alerts.yml") {
		t.Errorf("Prometheus rule_files = %v, want the alerts", prom.RuleFiles)
	}

	var col struct {
		Service struct {
			Pipelines map[string]struct {
				Receivers []string `yaml:"receivers"`
				Exporters []string `yaml:"exporters"`
			} `yaml:"pipelines"`
		} `yaml:"service"`
		Exporters map[string]struct {
			Endpoint string `yaml:"endpoint"`
		} `yaml:"exporters"`
	}
	decodeYAMLFile(t, "otel/collector.yaml", &col, false)
	traces := col.Service.Pipelines["traces"]
	if !slices.Contains(traces.Receivers, "otlp") || len(traces.Exporters) == 0 ||
		!strings.HasPrefix(col.Exporters[traces.Exporters[0]].Endpoint, "jaeger:") {
		t.Errorf("collector traces pipeline = %+v, want otlp in, Jaeger out", traces)
	}
}

func decodeYAMLFile(t *testing.T, path string, v any, strict bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(strict)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
}

// TestGrafanaDashboard checks that the committed dashboard parses, that every
// query uses metrics and labels the fleet serves, and that every metric
// family is on it.
func TestGrafanaDashboard(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("grafana/reviewfleet.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID    string `json:"uid"`
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("parse dashboard: %v", err)
	}
	if dash.UID == "" || dash.Title == "" {
		t.Error("dashboard has no uid or title")
	}
	used := map[string]bool{}
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			families, problems := exprMetrics(tg.Expr)
			for _, pr := range problems {
				t.Errorf("panel %q: %s in %s", p.Title, pr, tg.Expr)
			}
			if len(families) == 0 {
				t.Errorf("panel %q: query %q uses no fleet metric", p.Title, tg.Expr)
			}
			for _, f := range families {
				used[f] = true
			}
		}
	}
	for name := range fleetMetrics {
		if !used[name] {
			t.Errorf("no panel shows %s", name)
		}
	}
}

// TestAlertRules checks the alert rules: strict structure, known metrics and
// labels, a severity and a summary, and a runbook entry for each alert.
func TestAlertRules(t *testing.T) {
	t.Parallel()
	var rules struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	decodeYAMLFile(t, "prometheus/alerts.yml", &rules, true)
	runbook, err := os.ReadFile(filepath.Join("..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if r.Alert == "" || r.Expr == "" {
				t.Errorf("group %s: a rule without alert name or expression", g.Name)
				continue
			}
			// Prometheus' own up is the one other series an alert may read.
			families, problems := exprMetrics(r.Expr)
			if len(families) == 0 && !strings.Contains(r.Expr, "up{") {
				t.Errorf("%s uses no fleet metric: %s", r.Alert, r.Expr)
			}
			for _, p := range problems {
				t.Errorf("%s: %s in %s", r.Alert, p, r.Expr)
			}
			if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
				t.Errorf("%s severity = %q", r.Alert, r.Labels["severity"])
			}
			if r.Annotations["summary"] == "" {
				t.Errorf("%s has no summary", r.Alert)
			}
			anchor := strings.ToLower(r.Alert)
			if r.Annotations["runbook"] != "docs/operations.md#"+anchor {
				t.Errorf("%s runbook = %q, want docs/operations.md#%s", r.Alert, r.Annotations["runbook"], anchor)
			}
			if !bytes.Contains(runbook, []byte("### "+r.Alert+"\n")) {
				t.Errorf("docs/operations.md has no section \"### %s\"", r.Alert)
			}
		}
	}
	if n < 8 {
		t.Errorf("%d alert rules, want the fleet covered (at least 8)", n)
	}
}

// TestMetricCheckCatchesUnknownNames makes sure the query check above can
// fail.
func TestMetricCheckCatchesUnknownNames(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{
		`sum(rate(reviewfleet_llm_call_total[5m]))`,
		`sum by (queue) (reviewfleet_llm_calls_total)`,
		`reviewfleet_reviews{state="running"}`,
		`sum(rate(reviewfleet_llm_calls_total[5m])`,
	} {
		if _, problems := exprMetrics(expr); len(problems) == 0 {
			t.Errorf("%s passed the check", expr)
		}
	}
	if _, problems := exprMetrics(`histogram_quantile(0.95, sum by (le, stage) (rate(reviewfleet_stage_duration_seconds_bucket[5m])))`); len(problems) != 0 {
		t.Errorf("a valid query was refused: %v", problems)
	}
}

// TestPromQLParsesWithPromtool runs Prometheus' own checker, when promtool is
// on PATH, over the alert rules and over every dashboard query (as recording
// rules, Grafana's $__ variables replaced), so a query Prometheus would
// refuse fails here rather than on an empty panel; then the alerts' unit
// tests in prometheus/alerts_test.yml.
func TestPromQLParsesWithPromtool(t *testing.T) {
	t.Parallel()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not on PATH")
	}
	b, err := os.ReadFile("grafana/reviewfleet.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	n := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			n++
			expr := strings.NewReplacer("$__rate_interval", "5m", "$__range", "1h").Replace(tg.Expr)
			q, _ := json.Marshal(expr)
			fmt.Fprintf(&rules, "      - record: dashboard:query%d\n        expr: %s\n", n, q)
		}
	}
	dashRules := filepath.Join(t.TempDir(), "dashboard.yml")
	if err := os.WriteFile(dashRules, []byte(rules.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"prometheus/alerts.yml", dashRules} {
		out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput()
		if err != nil {
			t.Errorf("promtool check rules %s: %v\n%s", file, err, out)
		}
	}
	// The alerts' unit tests: when each fires and when it stays quiet.
	out, err := exec.Command(promtool, "test", "rules", "prometheus/alerts_test.yml").CombinedOutput()
	if err != nil {
		t.Errorf("promtool test rules prometheus/alerts_test.yml: %v\n%s", err, out)
	}
}
