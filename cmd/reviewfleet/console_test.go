package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

// Without a way to sign in the console does not start: it would serve
// nobody, or worse, be mistaken for open.
func TestConsoleNeedsASignIn(t *testing.T) {
	t.Parallel()
	env := testEnv{"DATABASE_URL": "postgres://127.0.0.1:1/none"}
	_, _, err := runEnv(t, env, "console")
	var ee exitError
	if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "REVIEWFLEET_CONSOLE_TOKEN") {
		t.Fatalf("console without a token: %v, want a usage error naming REVIEWFLEET_CONSOLE_TOKEN", err)
	}
	env["REVIEWFLEET_CONSOLE_TOKEN"] = "short"
	if _, _, err := runEnv(t, env, "console"); err == nil || !strings.Contains(err.Error(), "console.token") {
		t.Fatalf("console with a short token: %v, want an error naming console.token", err)
	}
}

// The command serves the console on --addr and refuses what comes
// without the token.
func TestConsoleCommandServes(t *testing.T) {
	t.Parallel()
	env := testEnv{"DATABASE_URL": testenv.IsolatedSchema(t), "REVIEWFLEET_CONSOLE_TOKEN": "console-command-token-0123"}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- run(env.context(ctx), []string{"console", "--addr", addr}, &out, &errOut) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("console: %v\n%s", err, errOut.String())
		}
	}()
	var resp *http.Response
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err = http.Get("http://" + addr + "/"); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("the console never answered: %v\n%s", err, errOut.String())
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the token: %d, want 401", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/reviews", nil)
	req.Header.Set("Authorization", "Bearer console-command-token-0123")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("with the token: %d, want 200", resp.StatusCode)
	}
}

// serve starts the console on a listener of its own when a sign-in is
// configured: the webhook port does not serve it, and the console port
// serves neither the webhook nor anything without the token.
func TestServeStartsTheConsoleOnItsOwnPort(t *testing.T) {
	t.Parallel()
	out, _, done := startServe(t, map[string]string{
		"REVIEWFLEET_WEBHOOK_ADMIN_ADDR": "",
		"REVIEWFLEET_CONSOLE_ADDR":       "127.0.0.1:0",
		"REVIEWFLEET_CONSOLE_TOKEN":      "serve-console-token-0123",
	})
	public := waitForLine(t, out, regexp.MustCompile(`webhooks on http://([^/\s]+)/webhook`), done)
	console := waitForLine(t, out, regexp.MustCompile(`console on http://([^/\s]+)/`), done)
	if code, _ := serveGet(t, "http://"+public+"/"); code != http.StatusNotFound {
		t.Errorf("webhook port /: %d, want 404 (no console there)", code)
	}
	if code, _ := serveGet(t, "http://"+console+"/reviews"); code != http.StatusUnauthorized {
		t.Errorf("console port without the token: %d, want 401", code)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+console+"/reviews", nil)
	req.Header.Set("Authorization", "Bearer serve-console-token-0123")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("console port with the token: %d, want 200", resp.StatusCode)
	}
	if code, _ := serveGet(t, "http://"+console+"/webhook"); code == http.StatusOK || code == http.StatusAccepted {
		t.Errorf("console port /webhook: %d, want no webhook there", code)
	}
}
