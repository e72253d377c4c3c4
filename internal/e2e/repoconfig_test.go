package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
)

// TestRepositoryConfiguration reviews a change whose repository carries
// .reviewfleet.yaml files at the head commit: an ignored directory is not
// reviewed, a directory's instructions reach the intent prompt of its
// files only, a disabled risk type is not raised, a stricter threshold
// keeps a finding out of the report, and an invalid file is reported with
// its line while the review goes on. The work tree's copy of the root file
// is broken and must not be read.
func TestRepositoryConfiguration(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "README", "base\n")
	// The rules the repository already agreed to live in the base.
	writeFile(t, dir, ".reviewfleet.yaml", "ignore:\n  - \"gen/**\"\ninstructions: Mind the ROOT-RULE.\n")
	writeFile(t, dir, "quiet/.reviewfleet.yaml", "instructions: Mind the QUIET-RULE.\ndisabled_risk_types: [robustness]\n")
	writeFile(t, dir, "strict/.reviewfleet.yaml", "thresholds:\n  robustness: 0.99\n")
	writeFile(t, dir, "broken/.reviewfleet.yaml", "instructions: fine\nignore_paths: [x]\n")
	base := commitAll(t, dir, "base")
	src := func(pkg string) string {
		return "package " + pkg + "\n\nfunc F() int {\n\treturn 1 // BUG: defect in " + pkg + "\n}\n"
	}
	for _, p := range []string{"a", "gen", "quiet", "strict", "broken"} {
		name := p + "/f.go"
		if p == "a" {
			name = "a.go"
		}
		writeFile(t, dir, name, src(p))
	}
	// The change's author rewrites the root rules to switch its own
	// review off: the review still follows the base's rules.
	writeFile(t, dir, ".reviewfleet.yaml", "ignore:\n  - \"**\"\nthresholds:\n  robustness: 1.0\ninstructions: Mind the HEAD-RULE.\n")
	head := commitAll(t, dir, "change")
	writeFile(t, dir, ".reviewfleet.yaml", "not: [valid\n") // uncommitted: the review reads commits only

	var mu sync.Mutex
	prompts := map[string]string{} // intent prompt by file heading
	markers := llmfake.Markers("")
	handler := func(ctx context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		if llmfake.SchemaName(req) == "reviewfleet_intent" {
			user := llmfake.LastUser(req)
			mu.Lock()
			for _, p := range []string{"a.go", "quiet/f.go", "strict/f.go", "broken/f.go", "gen/f.go"} {
				if strings.Contains(user, "### File: "+p+" (") {
					prompts[p] = user
				}
			}
			mu.Unlock()
		}
		return markers(ctx, req)
	}
	f := newFleet(t, handler, nil)
	r := f.review(t, submit.Request{Origin: submit.FromOperator, Repo: dir, Base: base, Head: head})
	if r.Status != review.ReviewDone {
		t.Fatalf("review: %s (%s)", r.Status, r.Error)
	}
	ctx := context.Background()
	rep, err := f.sub.Store.GetReport(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Findings       []struct{ File string }         `json:"findings"`
		BelowThreshold []struct{ File string }         `json:"below_threshold"`
		NotReviewed    []struct{ Path, Reason string } `json:"not_reviewed"`
		ConfigWarnings []struct {
			File    string
			Line    int
			Message string
		} `json:"config_warnings"`
	}
	if err := json.Unmarshal(rep.JSON, &doc); err != nil {
		t.Fatal(err)
	}

	var brokenWarned, changeWarned bool
	for _, w := range doc.ConfigWarnings {
		switch {
		case w.File == "broken/.reviewfleet.yaml" && w.Line == 2 && strings.Contains(w.Message, "ignore_paths"):
			brokenWarned = true
		case w.File == ".reviewfleet.yaml" && strings.Contains(w.Message, "next review"):
			changeWarned = true
		}
	}
	if len(doc.ConfigWarnings) != 2 || !brokenWarned || !changeWarned {
		t.Errorf("config warnings %+v, want one for broken/.reviewfleet.yaml line 2 and one saying the root file's change waits for the next review", doc.ConfigWarnings)
	}
	if !strings.Contains(rep.Markdown, "Configuration warnings") || !strings.Contains(rep.Markdown, "broken/.reviewfleet.yaml") {
		t.Errorf("markdown report does not show the invalid file")
	}
	ignored := false
	for _, n := range doc.NotReviewed {
		if n.Path == "gen/f.go" && n.Reason == submit.ReasonRepoIgnored {
			ignored = true
		}
	}
	if !ignored {
		t.Errorf("gen/f.go not set aside by the root ignore: %+v", doc.NotReviewed)
	}
	files := func(fs []struct{ File string }) string {
		var out []string
		for _, f := range fs {
			out = append(out, f.File)
		}
		return strings.Join(out, ",")
	}
	if got := files(doc.Findings); got != "a.go,broken/f.go" {
		t.Errorf("reported findings on %q, want a.go,broken/f.go (quiet disabled, strict above its threshold)", got)
	}
	if got := files(doc.BelowThreshold); got != "strict/f.go" {
		t.Errorf("below threshold: %q, want strict/f.go", got)
	}

	mu.Lock()
	defer mu.Unlock()
	if _, ok := prompts["gen/f.go"]; ok {
		t.Error("the ignored file reached the model")
	}
	quietPrompt := prompts["quiet/f.go"]
	if !strings.Contains(quietPrompt, "QUIET-RULE") || !strings.Contains(quietPrompt, "ROOT-RULE") {
		t.Errorf("quiet/f.go prompt lacks its cascaded instructions:\n%s", quietPrompt)
	}
	if strings.Contains(prompts["a.go"], "QUIET-RULE") || !strings.Contains(prompts["a.go"], "ROOT-RULE") ||
		strings.Contains(prompts["a.go"], "HEAD-RULE") {
		t.Errorf("a.go prompt has the wrong instructions:\n%s", prompts["a.go"])
	}
}
