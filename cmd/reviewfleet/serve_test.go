package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/syncio"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

// serve's public port answers the webhook and nothing else; the probes
// and the metrics are on the admin address.
func TestServeKeepsProbesAndMetricsOffTheWebhookPort(t *testing.T) {
	t.Parallel()
	out, errOut, done := startServe(t, map[string]string{"REVIEWFLEET_WEBHOOK_ADMIN_ADDR": "127.0.0.1:0"})
	public := waitForLine(t, out, regexp.MustCompile(`webhooks on http://([^/\s]+)/webhook`), done)
	admin := waitForLine(t, errOut, regexp.MustCompile(`probes on (\S+) `), done)
	for _, path := range []string{"/metrics", "/readyz", "/livez", "/healthz"} {
		if code, _ := serveGet(t, "http://"+public+path); code != http.StatusNotFound {
			t.Errorf("webhook port %s: %d, want 404", path, code)
		}
	}
	for _, path := range []string{"/readyz", "/livez"} {
		if code, _ := serveGet(t, "http://"+admin+path); code != http.StatusOK {
			t.Errorf("admin port %s: %d, want 200", path, code)
		}
	}
	if code, body := serveGet(t, "http://"+admin+"/metrics"); code != http.StatusOK || !strings.Contains(body, "# TYPE") {
		t.Errorf("admin port /metrics: %d, want 200 with metrics", code)
	}
	if code, _ := serveGet(t, "http://"+admin+"/webhook"); code != http.StatusNotFound {
		t.Errorf("admin port /webhook: %d, want 404", code)
	}
	// The webhook itself is there, and refuses an unsigned delivery.
	resp, err := http.Post("http://"+public+"/webhook", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned POST /webhook: %d, want 401", resp.StatusCode)
	}
}

func serveGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// startServe migrates a database of the test's own and runs `serve` on
// loopback ports until the test ends, with extra added to its
// environment; it returns serve's output and its result.
func startServe(t *testing.T, extra map[string]string) (out, errOut *syncio.Buffer, done <-chan error) {
	t.Helper()
	env := testEnv{
		"DATABASE_URL": testenv.IsolatedSchema(t), "REDIS_URL": testenv.RedisURL(t),
		"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_API_KEY": "unused",
		"GITHUB_WEBHOOK_SECRET":    "s3cret",
		"REVIEWFLEET_WEBHOOK_ADDR": "127.0.0.1:0",
	}
	for k, v := range extra {
		env[k] = v
	}
	if _, _, err := runEnv(t, env, "migrate"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut = &syncio.Buffer{}, &syncio.Buffer{}
	result := make(chan error, 1)
	go func() { result <- run(env.context(ctx), []string{"serve"}, out, errOut) }()
	t.Cleanup(func() {
		cancel()
		if err := <-result; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return out, errOut, result
}

// waitForLine waits until re matches what w holds, and returns its first group.
func waitForLine(t *testing.T, w *syncio.Buffer, re *regexp.Regexp, done <-chan error) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if m := re.FindStringSubmatch(w.String()); m != nil {
			return m[1]
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended before printing %s: %v", re, err)
		case <-deadline:
			t.Fatalf("serve did not print %s: %q", re, w.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
