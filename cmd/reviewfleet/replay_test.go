package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/replay"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

// TestDemoRecording checks the bundled recording; with
// REVIEWFLEET_UPDATE_DEMO=1 it records the demo against the rule-based
// exchange and writes internal/demo/recording.json again.
func TestDemoRecording(t *testing.T) {
	if os.Getenv("REVIEWFLEET_UPDATE_DEMO") == "1" {
		clearEnv(t)
		t.Setenv("DATABASE_URL", testenv.IsolatedSchema(t))
		t.Setenv("REVIEWFLEET_EXPERT_SNAPSHOT_DIR", t.TempDir())
		demoLive = true
		defer func() { demoLive = false }()
		out, stderr, err := runCmd(t, "review", "--demo", "--format", "json", "--quiet")
		if err != nil {
			t.Fatalf("live demo: %v\n%s", err, stderr)
		}
		var doc struct {
			ReviewID string `json:"review_id"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		rec, stderr, err := runCmd(t, "recording", "export", doc.ReviewID)
		if err != nil {
			t.Fatalf("export: %v\n%s", err, stderr)
		}
		// Leave out what belongs to this host: the demo writes its sample
		// (the snapshot) afresh, and the snapshot cache is a worker setting.
		var r replay.Recording
		if err := json.Unmarshal([]byte(rec), &r); err != nil {
			t.Fatal(err)
		}
		var cfg config.Config
		if err := json.Unmarshal(r.Review.Config, &cfg); err != nil {
			t.Fatal(err)
		}
		cfg.Expert.SnapshotDir, r.Review.Snapshot = "", ""
		r.Review.Config = pipeline.Snapshot(cfg)
		data, _ := json.MarshalIndent(r, "", " ")
		if err := os.WriteFile(filepath.Join("..", "..", "internal", "demo", "recording.json"), append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := demo.Recording()
	if err != nil {
		t.Fatal(err)
	}
	if rec.Review.Repo != demo.RepoName || len(rec.Review.Files) == 0 || len(rec.Review.Items) == 0 || len(rec.Exchanges) < len(rec.Review.Items) {
		t.Fatalf("bundled recording: repo %q, %d files, %d items, %d exchanges", rec.Review.Repo, len(rec.Review.Files), len(rec.Review.Items), len(rec.Exchanges))
	}
	for _, e := range rec.Exchanges {
		if strings.Contains(string(e.Reply), "UNTRUSTED-") {
			t.Errorf("a recorded reply quotes a fence: %s", e.Reply)
		}
	}
}

// verdictsOf is what a replay must reproduce: the status, and every
// finding shown or held back with its verdicts, without database ids.
func verdictsOf(t *testing.T, out string) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("report json: %v\n%s", err, out)
	}
	var strip func(v any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range []string{"id", "finding_id", "review_id", "merged_into", "duration_ms"} {
				delete(x, k)
			}
			for k, e := range x {
				x[k] = strip(e)
			}
		case []any:
			for i, e := range x {
				x[i] = strip(e)
			}
		}
		return v
	}
	keep := map[string]any{"status": doc["status"], "findings": strip(doc["findings"]), "below_threshold": strip(doc["below_threshold"])}
	b, _ := json.MarshalIndent(keep, "", " ")
	return string(b)
}

// A review recorded against an OpenAI-compatible server is replayed with
// that server closed: from the database and from an exported file, with
// the same findings and verdicts. A recording missing a reply fails the
// replay with an error naming the stage and item.
func TestReplayWithTheServerClosed(t *testing.T) {
	t.Parallel()
	env := testEnv{}
	var calls atomic.Int64
	srv := llmfake.New(func(ctx context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		calls.Add(1)
		return demo.Handler(ctx, req)
	})
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
	if err != nil {
		t.Fatalf("recorded review: %v\n%s", err, stderr)
	}
	srv.Close()
	recorded := verdictsOf(t, out)
	if !strings.Contains(recorded, `"expert"`) || calls.Load() == 0 {
		t.Fatalf("the recorded review has no expert verdicts:\n%s", recorded)
	}
	var doc struct {
		ReviewID string `json:"review_id"`
	}
	_ = json.Unmarshal([]byte(out), &doc)

	sent := calls.Load()
	// A configured fleet is set aside: the recorded replies are served by
	// this process, so the queue and the worker run here, and the notice
	// says so rather than claiming REDIS_URL is missing.
	env["REDIS_URL"] = "redis://127.0.0.1:1/0"
	out, stderr, err = runEnv(t, env, "review", "--replay", doc.ReviewID, "--format", "json", "--quiet")
	if err != nil {
		t.Fatalf("replay from the database: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "the recorded replies are served from this process: using an in-process Redis") || strings.Contains(stderr, "no REDIS_URL is set") {
		t.Errorf("replay notice:\n%s", stderr)
	}
	env["REDIS_URL"] = ""
	if got := verdictsOf(t, out); got != recorded {
		t.Errorf("replay from the database differs:\n%s\nrecorded:\n%s", got, recorded)
	}

	rec, stderr, err := runEnv(t, env, "recording", "export", doc.ReviewID)
	if err != nil {
		t.Fatalf("export: %v\n%s", err, stderr)
	}
	file := filepath.Join(t.TempDir(), "rec.json")
	if err := os.WriteFile(file, []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err = runEnv(t, env, "review", "--replay", file, "--repo", r.Dir, "--format", "json", "--quiet")
	if err != nil {
		t.Fatalf("replay from a file: %v\n%s", err, stderr)
	}
	if got := verdictsOf(t, out); got != recorded {
		t.Errorf("replay from a file differs:\n%s\nrecorded:\n%s", got, recorded)
	}
	if calls.Load() != sent {
		t.Errorf("the replays called the closed server %d times", calls.Load()-sent)
	}

	if _, _, err := runEnv(t, env, "review", "--replay", file, "--base", "HEAD"); err == nil || !strings.Contains(err.Error(), "--replay takes its change from the recording") {
		t.Errorf("--replay with --base: %v", err)
	}

	// Without its expert replies the replay stops at the first expert call.
	var full replay.Recording
	if err := json.Unmarshal([]byte(rec), &full); err != nil {
		t.Fatal(err)
	}
	cut := full
	cut.Exchanges = nil
	for _, e := range full.Exchanges {
		if e.Stage != "expert" {
			cut.Exchanges = append(cut.Exchanges, e)
		}
	}
	data, _ := json.Marshal(cut)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, stderr, err = runEnv(t, env, "review", "--replay", file, "--format", "json", "--quiet")
	var ee exitError
	if !errors.As(err, &ee) || ee.code != exitFailed || !strings.Contains(err.Error(), "replay: no recorded reply for expert item f") {
		t.Fatalf("want exit %d naming the expert item, got %v\n%s", exitFailed, err, stderr)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("a missing reply took %s to fail the replay", time.Since(start))
	}
}
