package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/store"
)

// twentyFiles writes a repository whose change touches twenty Go files,
// each with one marked defect (file f07.go with two), and returns its
// directory and the base and head commits.
func twentyFiles(t *testing.T) (dir, base, head string) {
	t.Helper()
	dir = t.TempDir()
	for i := range 20 {
		writeFile(t, dir, fmt.Sprintf("pkg/f%02d.go", i), fmt.Sprintf("package pkg\n\n// F%d returns its number.\nfunc F%d() int {\n\treturn %d\n}\n", i, i, i))
	}
	base = commitAll(t, dir, "base")
	for i := range 20 {
		extra := ""
		if i == 7 {
			extra = "\n// G7 returns two.\nfunc G7() int {\n\tn := 2 // BUG: second defect, fixed later\n\treturn n\n}\n"
		}
		writeFile(t, dir, fmt.Sprintf("pkg/f%02d.go", i), fmt.Sprintf(
			"package pkg\n\n// F%d returns its number.\nfunc F%d() int {\n\tv := %d // BUG: defect in F%d\n\treturn v\n}\n%s", i, i, i, i, extra))
	}
	return dir, base, commitAll(t, dir, "add defects")
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func commitAll(t *testing.T, dir, msg string) string {
	t.Helper()
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		run("init", "-q", "-b", "main")
	}
	run("add", "-A")
	run("commit", "-q", "-m", msg)
	return run("rev-parse", "HEAD")
}

// TestIncrementalReReviewRunsOnlyTheChangedFile reviews a twenty-file
// change, fixes one of the two defects of one file (moving the other one
// down a line), and re-reviews with Since: only that file goes through the
// LLM stages, the other nineteen files' findings are carried with their
// verdicts, the fixed finding is resolved and the moved one is not.
func TestIncrementalReReviewRunsOnlyTheChangedFile(t *testing.T) {
	t.Parallel()
	dir, base, head := twentyFiles(t)
	// Every marker is a robustness finding: without lifting the cap per
	// risk type (8) the manager would keep fewer findings than a change
	// spread over risk types keeps, and the full review would be cheaper
	// than it is in use. The cap on the total (15) stays.
	f := newFleet(t, llmfake.Markers(""), func(c *config.Config) { c.Manager.MaxPerRiskType = 100 })
	ctx := context.Background()
	first := f.review(t, submit.Request{Origin: submit.FromOperator, Repo: dir, Base: base, Head: head})
	if first.Status != review.ReviewDone || first.Incomplete {
		t.Fatalf("first review: %s incomplete=%v (%s)", first.Status, first.Incomplete, first.Error)
	}
	before, err := f.sub.Store.ListFindings(ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 21 {
		t.Fatalf("first review has %d findings, want 21", len(before))
	}

	writeFile(t, dir, "pkg/f07.go", "package pkg\n\n// F7 returns its number.\nfunc F7() int {\n\n\tv := 7 // BUG: defect in F7\n\treturn v\n}\n")
	head2 := commitAll(t, dir, "fix the second defect")
	second := f.review(t, submit.Request{Origin: submit.FromOperator, Repo: dir, Base: base, Head: head2, Since: first.ID})
	if second.Status != review.ReviewDone || second.Incomplete {
		t.Fatalf("second review: %s (%s)", second.Status, second.Error)
	}
	t.Logf("LLM calls: full review %d %v, re-review of one changed file %d %v",
		first.LLMCalls, callsByStage(t, f.sub.Store, first.ID), second.LLMCalls, callsByStage(t, f.sub.Store, second.ID))
	if second.LLMCalls == 0 || second.LLMCalls*10 > first.LLMCalls {
		t.Fatalf("re-review made %d calls, full review %d: want at least one and at most 10%%", second.LLMCalls, first.LLMCalls)
	}

	otherDir, otherBase, otherHead := twentyFiles(t)
	if _, err := f.sub.Submit(ctx, submit.Request{Origin: submit.FromOperator, Repo: otherDir, Base: otherBase, Head: otherHead, Since: first.ID}); err == nil ||
		!strings.Contains(err.Error(), "cannot be built on") {
		t.Errorf("a review of another repository built on %s: %v", first.ID, err)
	}

	after, err := f.sub.Store.ListFindings(ctx, second.ID)
	if err != nil {
		t.Fatal(err)
	}
	carried, fresh := 0, 0
	for _, fd := range after {
		if fd.CarriedFrom != 0 {
			carried++
			if fd.File == "pkg/f07.go" {
				t.Errorf("finding on the changed file was carried: %+v", fd)
			}
			continue
		}
		fresh++
		if fd.File != "pkg/f07.go" {
			t.Errorf("file %s was reviewed again", fd.File)
		}
	}
	if carried != 19 || fresh != 1 {
		t.Fatalf("second review: %d carried, %d reviewed findings; want 19 and 1", carried, fresh)
	}
	vs := verdictsByStage(t, f.sub.Store, second.ID)
	evaluated := map[int64]string{}
	for _, v := range verdictsByStage(t, f.sub.Store, first.ID)["eval"] {
		evaluated[v.FindingID] = v.Verdict
	}
	for _, v := range vs["eval"] {
		evaluated[v.FindingID] = v.Verdict
	}
	withEval := 0
	for _, fd := range after {
		if fd.CarriedFrom != 0 && evaluated[fd.ID] != evaluated[fd.CarriedFrom] {
			t.Errorf("carried finding %d has eval verdict %q, its original %d %q", fd.ID, evaluated[fd.ID], fd.CarriedFrom, evaluated[fd.CarriedFrom])
		}
		if fd.CarriedFrom != 0 && evaluated[fd.ID] != "" {
			withEval++
		}
	}
	if withEval == 0 {
		t.Error("no carried finding kept an eval verdict")
	}
	rep, err := f.sub.Store.GetReport(ctx, second.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Markdown, "Resolved since the previous review") || !strings.Contains(rep.Markdown, "second defect") {
		t.Errorf("report of the re-review does not list the resolved finding:\n%s", rep.Markdown)
	}
	if !strings.Contains(rep.Markdown, "pkg/f03.go") {
		t.Errorf("report of the re-review lacks a carried finding:\n%s", rep.Markdown)
	}

	again, err := f.sub.Store.ListFindings(ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range again {
		fixed := strings.Contains(fd.Description, "second defect")
		switch {
		case fixed && fd.ResolvedIn != second.ID:
			t.Errorf("fixed finding %q not resolved by the re-review (resolved_in %q)", fd.Description, fd.ResolvedIn)
		case !fixed && fd.ResolvedIn != "":
			t.Errorf("finding %s %q resolved though still raised", fd.File, fd.Description)
		}
	}
}

func callsByStage(t *testing.T, st *store.Store, id string) map[string]int {
	t.Helper()
	calls, err := st.ListLLMCalls(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, c := range calls {
		out[c.Stage]++
	}
	return out
}
