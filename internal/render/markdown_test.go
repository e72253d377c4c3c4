package render

import (
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

func TestMarkdownSectionsInOrder(t *testing.T) {
	t.Parallel()
	md := Markdown(sampleReport())
	sections := []string{
		"# Review of acme/payments: main..feature/refunds\n",
		"\n## Summary\n",
		"\n### Eval gate\n",
		"\n### LLM usage\n",
		"\n## Findings\n",
		"\n### `refund/worker.go`\n",
		"\n### `api/refund handler.go`\n",
		"\n## Not reviewed\n",
		"\n### Failed items\n",
		"\n## Below threshold\n",
		"\n## Dropped by triage\n",
	}
	at := 0
	for _, s := range sections {
		i := strings.Index(md[at:], s)
		if i < 0 {
			t.Fatalf("section %q missing or out of order in:\n%s", s, md)
		}
		at += i + len(s)
	}
}

func TestMarkdownContent(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	md := Markdown(r)
	want := []string{
		// facts
		"- **Status:** succeeded",
		"- **Commits:** `111111111111`..`222222222222`",
		"(took 3m12s)",
		"- **Intent mode:** per_file",
		"- **Confidence threshold:** 0.60",
		"skipped by configuration: verify.",
		// summary tables
		"| concurrency | 0 | 1 | 0 | 0 | 0 | 1 |",
		"| **Total** | 0 | 1 | 1 | 1 | 0 | 3 |",
		"| robustness | 0 | 2 | 1 |",
		"| 42 | 1,234,567 | 8,910 |",
		"3 findings reported, 1 below threshold, 2 dropped by triage, 2 files not reviewed, 1 failed item.",
		// first finding in full
		"#### 1. HIGH · concurrency · lines 41–42",
		"Confidence **0.85**\n",
		r.Findings[0].Description,
		"**Suggestion:**\n" + r.Findings[0].Suggestion,
		"  40 | \tgo func() {\n> 41 | \t\trefunds[id] = r\n> 42 | \t}()\n",
		"**Trail:** verify: anchored (0.80→0.80) → expert: confirmed (0.80→0.85) → eval: confirmed (0.85→0.85)",
		"- verify (m1): anchored\n  - line 41 writes refunds",
		"- eval (m2): No lock guards the map.",
		"**Expert run:** stopped: accepted · 4 rounds · 7 tool calls",
		"- grep found no mu.Lock in worker.go",
		// a code line holding a fence gets a longer fence
		"````\n> 60 | total := amount - fee // uses ``` in a comment\n````",
		"#### 3. LOW · authorization · lines 15–18",
		// other sections
		"| `go.sum` | lock_file |",
		"| `assets/logo.png` | binary |",
		"| expert | `finding:21` | reply did not validate: missing field \\| verdict |",
		"- #4 low lifecycle `refund/store.go:5-9` (0.40): Cache entry not invalidated &lt;after> delete.",
		"- #5 robustness `refund/worker.go:200` — manager: dropped, too far from a change (42 lines from nearest changed line (window 5)) — Unchecked error.",
		// numbers are per review (1..N), not the stored global IDs 12, 13, 7
		"- #6 concurrency `refund/worker.go:41` — manager: dropped as a duplicate of #1 — Map race on refunds.",
	}
	for _, w := range want {
		if !strings.Contains(md, w) {
			t.Errorf("Markdown lacks %q", w)
		}
	}
	// The expert verdict's evidence is shown once, with the expert run.
	if strings.Contains(md, "dup of expert evidence") {
		t.Error("expert verdict evidence repeated next to the expert run")
	}
	checkTables(t, md)
	checkFences(t, md)
}

func TestMarkdownEmptyAndNil(t *testing.T) {
	t.Parallel()
	if got := Markdown(nil); got != "" {
		t.Errorf("Markdown(nil) = %q", got)
	}
	md := Markdown(&Report{})
	for _, w := range []string{
		"# Review of repository: ?..?",
		"0 findings reported, 0 below threshold, 0 dropped by triage, 0 files not reviewed, 0 failed items.",
		"No findings reached the eval gate.",
		"No findings at or above the confidence threshold.",
		"Every changed file was reviewed",
		"## Below threshold\n\nNone.",
		"## Dropped by triage\n\nNone.",
	} {
		if !strings.Contains(md, w) {
			t.Errorf("empty report lacks %q:\n%s", w, md)
		}
	}
	if strings.Contains(md, "| Risk type | critical") {
		t.Error("empty report has a severity table")
	}
}

func TestMarkdownSkippedEvalAndOddValues(t *testing.T) {
	t.Parallel()
	r := &Report{
		SkippedStages: []string{"verify", "eval"},
		Status:        "failed",
		Error:         "budget exhausted:\nmax tokens",
		Findings: []Finding{
			{Finding: review.Finding{ID: 1, RiskType: "style", Severity: "nit", File: "a.go", LineStart: 3, LineEnd: 3, Confidence: 0.9}},
		},
	}
	md := Markdown(r)
	for _, w := range []string{
		"### Eval gate\n\nSkipped by configuration.",
		"skipped by configuration: verify, eval.",
		"> **FAILED:** budget exhausted: max tokens",
		"| Risk type | critical | high | medium | low | info | other | Total |",
		"| style | 0 | 0 | 0 | 0 | 0 | 1 | 1 |",
		"#### 1. NIT · style · line 3",
	} {
		if !strings.Contains(md, w) {
			t.Errorf("Markdown lacks %q:\n%s", w, md)
		}
	}
	checkTables(t, md)
}

func TestMarkdownHostileText(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	r.Findings[0].Description = "# Not a heading\nraw <details> tag\n```\nunclosed fence"
	r.Findings[0].Suggestion = "Heading underline\n==="
	r.Findings[1].File = "odd|na`me.go"
	r.NotReviewed = append(r.NotReviewed, NotReviewed{Path: "a|b.bin", Reason: "binary\n| injected | row |"})
	r.FailedItems[0].ItemKey = "key`with|pipe"
	r.BelowThreshold[0].Description = "## heading in a list item | and a pipe"
	md := Markdown(r)
	checkTables(t, md)
	checkFences(t, md)
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "#") && strings.Contains(line, "heading") {
			t.Errorf("user text became a heading: %q", line)
		}
		if strings.HasPrefix(line, "| injected") {
			t.Errorf("user text became a table row: %q", line)
		}
	}
	if strings.Contains(md, "<details>") {
		t.Error("raw HTML from user text survived")
	}
}

// checkTables fails when a table row has a different number of cells from
// its header, counting only unescaped pipes.
func checkTables(t *testing.T, md string) {
	t.Helper()
	header := -1
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			header = -1
			continue
		}
		n := unescapedPipes(line)
		if header < 0 {
			header = n
			continue
		}
		if n != header {
			t.Errorf("table row has %d cell separators, header has %d: %q", n, header, line)
		}
	}
}

func unescapedPipes(line string) int {
	n := 0
	for i := 0; i < len(line); i++ {
		if line[i] == '|' && (i == 0 || line[i-1] != '\\') {
			n++
		}
	}
	return n
}

// checkFences fails when a code fence is left open or a report heading
// lands inside a fenced block.
func checkFences(t *testing.T, md string) {
	t.Helper()
	open := ""
	for _, line := range strings.Split(md, "\n") {
		if open != "" {
			if closesFence(line, open) {
				open = ""
			} else if strings.HasPrefix(line, "## ") {
				t.Errorf("section heading %q is inside a code block", line)
			}
			continue
		}
		if f := openingFence(line); f != "" {
			open = f
		}
	}
	if open != "" {
		t.Errorf("code fence %q left open", open)
	}
}

func TestMarkdownShowsNotesFirst(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	md := Markdown(r)
	note := strings.Index(md, "recorded exchange")
	summary := strings.Index(md, "## Summary")
	if note < 0 || summary < 0 || note > summary {
		t.Fatalf("the note must come before the summary (note at %d, summary at %d)", note, summary)
	}
}
