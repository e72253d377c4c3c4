package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/syncio"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

// TestMain lets the test binary stand in for the reviewfleet binary when
// a test starts it as a separate process.
func TestMain(m *testing.M) {
	if os.Getenv("REVIEWFLEET_BE_MAIN") == "1" {
		main()
		return
	}
	// Most tests here wait on a fleet of separate processes or on a
	// review's progress, leaving the cores idle at two at a time.
	testenv.RaiseParallel(4)
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

// clearEnv unsets every variable that would reach a command's config.
func clearEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if configVar(k) {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

// configVar reports whether the variable k reaches a command's config.
func configVar(k string) bool {
	return strings.HasPrefix(k, "REVIEWFLEET_") || strings.HasPrefix(k, "OPENAI_") ||
		strings.HasPrefix(k, "GITHUB_") || k == "DATABASE_URL" || k == "REDIS_URL"
}

// testEnv is the environment of the commands one test runs: of the
// variables that reach a command's config only those set here are seen,
// whatever the process has, and the test may run in parallel with others.
type testEnv map[string]string

func (e testEnv) lookup(k string) (string, bool) {
	if v, ok := e[k]; ok {
		return v, true
	}
	if configVar(k) {
		return "", false
	}
	return os.LookupEnv(k)
}

func (e testEnv) environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !configVar(k) {
			out = append(out, kv)
		}
	}
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	return out
}

// context returns ctx whose commands read e as their environment.
func (e testEnv) context(ctx context.Context) context.Context {
	return withEnv(ctx, environment{lookup: e.lookup, environ: e.environ})
}

// runEnv runs a command with env as its environment.
func runEnv(t *testing.T, env testEnv, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := run(env.context(ctx), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func runCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := run(ctx, args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestUsageAndBadArguments(t *testing.T) {
	t.Parallel()
	env := testEnv{}
	if out, _, err := runEnv(t, env); err != nil || !strings.Contains(out, "reviewfleet review") {
		t.Fatalf("usage: %v %q", err, out)
	}
	if _, _, err := runEnv(t, env, "frobnicate"); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("unknown command: %v", err)
	}
	if _, _, err := runEnv(t, env, "review", "--format", "pdf"); err == nil || !strings.Contains(err.Error(), "--format") {
		t.Fatalf("bad format: %v", err)
	}
	if out, _, err := runEnv(t, env, "config", "keys"); err != nil || !strings.Contains(out, "REVIEWFLEET_HARNESS_EVAL_ENABLED") {
		t.Fatalf("config keys: %v", err)
	}
	env["REVIEWFLEET_HARNESS_CONFIDENCE_THRESHOLD"] = "7"
	if _, _, err := runEnv(t, env, "status"); err == nil || !strings.Contains(err.Error(), "harness.confidence_threshold") {
		t.Fatalf("bad configuration must be reported with its key: %v", err)
	}
}

func TestRealReviewWithoutEndpointFailsFast(t *testing.T) {
	t.Parallel()
	env := testEnv{}
	env["DATABASE_URL"] = testenv.IsolatedSchema(t)
	r, err := demo.WriteRepo(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err = runEnv(t, env, "review", "--repo", r.Dir, "--base", r.Base, "--head", r.Head)
	if err == nil || !strings.Contains(err.Error(), "OPENAI_BASE_URL") || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("want an error naming OPENAI_BASE_URL and OPENAI_API_KEY, got %v", err)
	}
	if time.Since(start) > 30*time.Second {
		t.Fatalf("took %s to fail", time.Since(start))
	}
}

func TestDemoThenStatusAndReport(t *testing.T) {
	t.Parallel()
	env := testEnv{}
	env["DATABASE_URL"] = testenv.IsolatedSchema(t)
	env["REVIEWFLEET_EXPERT_SNAPSHOT_DIR"] = t.TempDir()
	out, stderr, err := runEnv(t, env, "review", "--demo", "--format", "json")
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "RECORDED") || !strings.Contains(stderr, "intent 3/3") {
		t.Errorf("stderr lacks the recorded-exchange label or progress:\n%s", stderr)
	}
	var doc struct {
		ReviewID string   `json:"review_id"`
		Status   string   `json:"status"`
		Findings []any    `json:"findings"`
		Notes    []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Status != "done" || len(doc.Findings) == 0 ||
		len(doc.Notes) != 1 || !strings.Contains(doc.Notes[0], "recorded exchange") {
		t.Fatalf("demo json: %v %+v\n%s", err, doc, out)
	}
	status, _, err := runEnv(t, env, "status", doc.ReviewID)
	if err != nil || !strings.Contains(status, "done") || !strings.Contains(status, "eval") {
		t.Fatalf("status: %v\n%s", err, status)
	}
	// The recorded expert reads the cited file in each run.
	if !strings.Contains(status, "runs; tools: read_file") || !strings.Contains(status, "rounds; tools: read_file 1 hit") {
		t.Errorf("status lacks the expert runs' tool health:\n%s", status)
	}
	sarif, _, err := runEnv(t, env, "report", doc.ReviewID, "--format", "sarif")
	if err != nil || !strings.Contains(sarif, `"version": "2.1.0"`) {
		t.Fatalf("report: %v\n%s", err, sarif)
	}
	list, _, err := runEnv(t, env, "status")
	if err != nil || !strings.Contains(list, doc.ReviewID) {
		t.Fatalf("status list: %v\n%s", err, list)
	}
}

// startWorkerProcess runs `reviewfleet worker` in a process of its own
// with env (the process environment when nil); it is killed when the test
// ends. The returned buffer collects its stderr.
func startWorkerProcess(t *testing.T, env testEnv) (*exec.Cmd, *syncio.Buffer) {
	t.Helper()
	log := &syncio.Buffer{}
	w := exec.Command(os.Args[0], "worker")
	environ := os.Environ()
	if env != nil {
		environ = env.environ()
	}
	w.Env = append(environ, "REVIEWFLEET_BE_MAIN=1")
	w.Stderr = log
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Process.Kill(); _ = w.Wait() })
	return w, log
}

// The path: migrate, a worker in its own process, and a review
// submitted against the machine's Redis and Postgres and an
// OpenAI-compatible server.
func TestSeparateWorkerProcess(t *testing.T) {
	t.Parallel()
	srv := llmfake.New(demo.Handler)
	defer srv.Close()
	dsn := testenv.EmptySchema(t)
	redisURL := testenv.RedisURL(t)
	env := testEnv{
		"DATABASE_URL": dsn, "REDIS_URL": redisURL, "OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k",
		"REVIEWFLEET_WORKER_HEALTH_ADDR": "127.0.0.1:0", "REVIEWFLEET_EXPERT_SNAPSHOT_DIR": t.TempDir(),
		"REVIEWFLEET_WORKER_TASK_CHECK_INTERVAL": "20ms",
	}
	if out, _, err := runEnv(t, env, "migrate"); err != nil || !strings.Contains(out, "applied") {
		t.Fatalf("migrate: %v %s", err, out)
	}
	w, workerLog := startWorkerProcess(t, env)

	r, err := demo.WriteRepo(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runEnv(t, env, "review", "--repo", r.Dir, "--base", r.Base, "--head", r.Head, "--format", "json")
	if err != nil {
		t.Fatalf("review: %v\n%s\nworker:\n%s", err, stderr, workerLog.String())
	}
	var doc struct {
		ReviewID string `json:"review_id"`
		Status   string `json:"status"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Status != "done" {
		t.Fatalf("review json: %v\n%s", err, out)
	}
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	vs, _ := st.ListVerdicts(context.Background(), doc.ReviewID)
	stages := map[string]bool{}
	for _, v := range vs {
		stages[string(v.Stage)] = true
	}
	if !stages["verify"] || !stages["expert"] || !stages["eval"] {
		t.Fatalf("verdict stages %v", stages)
	}
	// The worker stops cleanly on SIGTERM.
	_ = w.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- w.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("worker exit: %v\n%s", err, workerLog.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("worker did not stop on SIGTERM")
	}
	_ = filepath.Join
}

// A GitHub App key that is not mounted stops only what uses GitHub: the
// migrate Job and read-only commands run, a worker (which clones with
// it) refuses to start and names the setting.
func TestMissingAppKeyStopsOnlyGitHubUsers(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "reviewfleet.yaml")
	missing := filepath.Join(t.TempDir(), "absent.pem")
	if err := os.WriteFile(cfg, []byte("github:\n  app_id: 7\n  app_private_key_file: "+missing+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := testEnv{"DATABASE_URL": testenv.IsolatedSchema(t), "OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_API_KEY": "k"}
	for _, args := range [][]string{{"migrate"}, {"status"}} {
		if _, stderr, err := runEnv(t, env, append(args, "--config", cfg)...); err != nil {
			t.Errorf("%s with the App's key missing: %v\n%s", args[0], err, stderr)
		}
	}
	env["REDIS_URL"] = testenv.RedisURL(t)
	_, _, err := runEnv(t, env, "worker", "--config", cfg)
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), "github.app_private_key_file") {
		t.Errorf("worker with the App's key missing: %v, want exit 2 naming github.app_private_key_file", err)
	}
}
