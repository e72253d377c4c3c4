package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/gitsrc/gitsrctest"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
)

// findingOnChangedLine reports a finding on the changed line of app.py and
// util.py, verified, so that the expert explores the head tree with its
// tools (the snapshot is exported from the repository); every other reply
// follows the schema.
func findingOnChangedLine(ctx context.Context, req openaiRequest) llmfake.Reply {
	if llmfake.SchemaName(req) == "reviewfleet_intent" {
		findings := []any{}
		for file, quote := range map[string]string{"app.py": "return a - b", "util.py": "return b - a"} {
			if strings.Contains(llmfake.LastUser(req), "### File: "+file) {
				findings = append(findings, map[string]any{
					"risk_type": "robustness", "file": file, "line_start": 2, "line_end": 2,
					"description": "the operands are swapped", "suggestion": "swap them", "quote": quote, "fix": "",
					"severity": "high", "confidence": 0.9,
				})
			}
		}
		return llmfake.JSON(map[string]any{"findings": findings})
	}
	if llmfake.SchemaName(req) == "reviewfleet_verify" {
		return llmfake.JSON(map[string]any{"anchored": true, "evidence": "The cited line reads: return a - b", "adjusted_confidence": 0.9})
	}
	if len(req.Tools) > 0 {
		return hostileExpert("")(ctx, req)
	}
	return llmfake.FromSchema(req)
}

// A repository whose configuration, attributes and hooks try to run a
// program at every occasion git offers is reviewed in every mode that
// reads a repository: a commit range of the work tree, a diff file against
// the work tree, a remote cloned over file://, and an incremental
// re-review. Nothing runs, and every review completes.
func TestReviewedRepositoryRunsNothing(t *testing.T) {
	t.Parallel()
	h := gitsrctest.NewHostile(t)
	h.ProveLive(t)
	f := newFleet(t, findingOnChangedLine, nil)

	diffFile := filepath.Join(t.TempDir(), "fsm.diff")
	if err := os.WriteFile(diffFile, []byte("diff --git a/util.py b/util.py\n--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n def sub(a, b):\n-    return a - b\n+    return b - a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	modes := []struct {
		name string
		req  submit.Request
	}{
		{"commit range", submit.Request{Origin: submit.FromOperator, Repo: h.Dir, Base: h.Base, Head: h.Head, ChangeKey: "hostile"}},
		{"diff against the work tree", submit.Request{Origin: submit.FromOperator, Repo: h.Dir, DiffFile: diffFile}},
		{"remote over file://", submit.Request{Origin: submit.FromOperator, Repo: "file://" + h.Bare, Base: h.Base, Head: "main"}},
		{"incremental", submit.Request{Origin: submit.FromOperator, Repo: h.Dir, Base: h.Base, Head: h.Head, ChangeKey: "hostile"}},
	}
	for _, m := range modes {
		r := f.review(t, m.req)
		if r.Status != review.ReviewDone {
			t.Errorf("%s: status %s: %s", m.name, r.Status, r.Error)
		}
		if r.SnapshotFallback != "" {
			t.Errorf("%s: the head tree was not available: %s", m.name, r.SnapshotFallback)
		}
		runs, err := f.sub.Store.ListExpertRuns(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 0 {
			t.Errorf("%s: no expert run explored the head tree", m.name)
		}
		if ran := h.Ran(); len(ran) > 0 {
			t.Fatalf("%s: the repository's configuration ran %v", m.name, ran)
		}
	}
}
