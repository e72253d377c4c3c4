package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

// A provider that answers 401 to every call: the review fails and the
// command exits 4, with the provider's message, so a CI job stops.
func TestReviewAgainstARefusingProviderExitsFailed(t *testing.T) {
	t.Parallel()
	env := testEnv{}
	srv := llmfake.New(func(context.Context, openai.ChatCompletionRequest) llmfake.Reply {
		return llmfake.Fail(401, "Incorrect API key provided")
	})
	t.Cleanup(srv.Close)
	env["DATABASE_URL"] = testenv.IsolatedSchema(t)
	env["OPENAI_BASE_URL"] = srv.URL
	env["OPENAI_API_KEY"] = "wrong"
	env["REVIEWFLEET_EXPERT_SNAPSHOT_DIR"] = t.TempDir()
	if _, stderr, err := runEnv(t, env, "migrate"); err != nil {
		t.Fatalf("migrate: %v\n%s", err, stderr)
	}
	r, err := demo.WriteRepo(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runEnv(t, env, "review", "--repo", r.Dir, "--base", r.Base, "--head", r.Head, "--quiet")
	var ee exitError
	if !errors.As(err, &ee) || ee.code != exitFailed {
		t.Fatalf("want exit code %d, got %v\n%s", exitFailed, err, stderr)
	}
	if !strings.Contains(err.Error(), "401") || !strings.Contains(out, "**FAILED:**") {
		t.Errorf("the error and the report must say why: %v\n%s", err, out)
	}
}

func TestFailOnNeedsASeverity(t *testing.T) {
	t.Parallel()
	env := testEnv{}
	_, _, err := runEnv(t, env, "review", "--demo", "--fail-on", "dire")
	var ee exitError
	if !errors.As(err, &ee) || ee.code != exitUsage {
		t.Fatalf("want a usage error, got %v", err)
	}
}

// The demo reports a critical finding: --fail-on high gates on it.
func TestFailOnGatesOnReportedFindings(t *testing.T) {
	t.Parallel()
	env := testEnv{}
	env["DATABASE_URL"] = testenv.IsolatedSchema(t)
	env["REVIEWFLEET_EXPERT_SNAPSHOT_DIR"] = t.TempDir()
	_, stderr, err := runEnv(t, env, "review", "--demo", "--quiet", "--fail-on", "high")
	var ee exitError
	if !errors.As(err, &ee) || ee.code != exitFindings {
		t.Fatalf("want exit code %d, got %v\n%s", exitFindings, err, stderr)
	}
}

// Replies for one file that never parse: the review is done but
// incomplete, the command exits 3, and status says why.
func TestIncompleteReviewExitsThreeAndStatusSaysWhy(t *testing.T) {
	t.Parallel()
	env := testEnv{}
	srv := llmfake.New(func(ctx context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		for _, m := range req.Messages {
			if llmfake.SchemaName(req) == "reviewfleet_intent" && strings.Contains(m.Content, "### File: api/auth.go") {
				return llmfake.Text("no JSON today")
			}
		}
		return demo.Handler(ctx, req)
	})
	t.Cleanup(srv.Close)
	env["DATABASE_URL"] = testenv.IsolatedSchema(t)
	env["OPENAI_BASE_URL"] = srv.URL
	env["OPENAI_API_KEY"] = "test"
	env["REVIEWFLEET_LLM_MODEL"] = demo.Model
	env["REVIEWFLEET_EXPERT_SNAPSHOT_DIR"] = t.TempDir()
	if _, stderr, err := runEnv(t, env, "migrate"); err != nil {
		t.Fatalf("migrate: %v\n%s", err, stderr)
	}
	r, err := demo.WriteRepo(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runEnv(t, env, "review", "--repo", r.Dir, "--base", r.Base, "--head", r.Head, "--format", "json", "--quiet")
	var ee exitError
	if !errors.As(err, &ee) || ee.code != exitIncomplete {
		t.Fatalf("want exit code %d, got %v\n%s", exitIncomplete, err, stderr)
	}
	var doc struct {
		ReviewID   string `json:"review_id"`
		Incomplete bool   `json:"incomplete"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || !doc.Incomplete {
		t.Fatalf("json: %v %+v", err, doc)
	}
	status, _, err := runEnv(t, env, "status", doc.ReviewID)
	if err != nil || !strings.Contains(status, "INCOMPLETE: items not reviewed: 1") || !strings.Contains(status, "invalid LLM reply") {
		t.Fatalf("status: %v\n%s", err, status)
	}
}

// Ctrl-C during an in-process review: the printed report says the review
// was interrupted and what did not run, rather than listing unchecked
// findings as if it were complete.
func TestInterruptedReviewSaysSo(t *testing.T) {
	t.Parallel()
	env := testEnv{}
	called, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := llmfake.New(func(ctx context.Context, _ openai.ChatCompletionRequest) llmfake.Reply {
		once.Do(func() { close(called) })
		select { // hold the first call until the command is interrupted
		case <-ctx.Done():
		case <-release:
		}
		return llmfake.Fail(500, "gone")
	})
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	env["DATABASE_URL"] = testenv.IsolatedSchema(t)
	env["OPENAI_BASE_URL"] = srv.URL
	env["OPENAI_API_KEY"] = "k"
	env["REVIEWFLEET_EXPERT_SNAPSHOT_DIR"] = t.TempDir()
	if _, stderr, err := runEnv(t, env, "migrate"); err != nil {
		t.Fatalf("migrate: %v\n%s", err, stderr)
	}
	r, err := demo.WriteRepo(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-called:
			cancel() // what Ctrl-C does to the command's context
		case <-time.After(2 * time.Minute):
		}
	}()
	var out, errOut bytes.Buffer
	err = run(env.context(ctx), []string{"review", "--repo", r.Dir, "--base", r.Base, "--head", r.Head, "--quiet"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("want an interrupted error, got %v\n%s", err, errOut.String())
	}
	for _, want := range []string{"**INTERRUPTED:**", "did not run:", "stages never reached:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
