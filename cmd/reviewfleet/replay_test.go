package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
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
