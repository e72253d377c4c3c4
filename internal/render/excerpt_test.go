package render

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// bigReport cites a whole 5,000-line file of long lines in each of its
// findings, as a model citing "lines 1-5000" makes the report stage do.
func bigReport() *Report {
	r := sampleReport()
	code := make([]CodeLine, 5000)
	for i := range code {
		code[i] = CodeLine{Line: i + 1, Text: strings.Repeat("x", 600)}
	}
	for i := range r.Findings {
		r.Findings[i].LineStart, r.Findings[i].LineEnd = 1, 5000
		r.Findings[i].Code = code
	}
	return r
}

func TestLargeReviewReportsStaySmall(t *testing.T) {
	t.Parallel()
	r := bigReport()
	md := Markdown(r)
	js, err := JSON(r)
	if err != nil {
		t.Fatal(err)
	}
	// Three findings: a few KB each at most, whatever they cite.
	if len(md) > 24<<10 || len(js) > 24<<10 {
		t.Fatalf("Markdown %d bytes, JSON %d bytes: excerpts are not capped", len(md), len(js))
	}
	if !strings.Contains(md, "_Excerpt cut: 4988 more lines not shown (lines 13–5000); long lines cut after 240 bytes") {
		t.Errorf("Markdown does not say what was cut:\n%s", md[:min(len(md), 3000)])
	}
	var doc struct {
		Findings []struct {
			Number   int               `json:"number"`
			Code     []json.RawMessage `json:"code"`
			CodeNote string            `json:"code_note"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	for i, f := range doc.Findings {
		if len(f.Code) != MaxExcerptLines || !strings.Contains(f.CodeNote, "4988 more lines not shown") || f.Number != i+1 {
			t.Errorf("finding %d: %d code lines, note %q, number %d", i, len(f.Code), f.CodeNote, f.Number)
		}
	}
	// A decoded report renders the same note again.
	back, err := DecodeJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	if md2 := Markdown(back); !strings.Contains(md2, "4988 more lines not shown") {
		t.Error("the note is lost after a JSON round trip")
	}
}

func TestTitleAndDuration(t *testing.T) {
	t.Parallel()
	r := &Report{Repo: "acme/api", HeadRef: "options.patch", CreatedAt: time.Unix(100, 0)}
	r.FinishedAt = r.CreatedAt.Add(420 * time.Millisecond)
	md := Markdown(r)
	for _, w := range []string{"# Review of acme/api: diff options.patch\n", "(took 420ms)"} {
		if !strings.Contains(md, w) {
			t.Errorf("Markdown lacks %q:\n%s", w, md)
		}
	}
	if strings.Contains(md, "?..") || strings.Contains(md, "took 0s") {
		t.Errorf("misleading title or duration:\n%s", md)
	}
	r.BaseRef, r.HeadRef = "main", "feature"
	if md := Markdown(r); !strings.Contains(md, "# Review of acme/api: main..feature\n") {
		t.Errorf("base..head title:\n%s", md)
	}
}

// The verify stage stores its sentence as both reason and evidence; the
// report says it once.
func TestVerifySentenceOnce(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	const s = "line 41 writes the shared map without the lock"
	r.Findings[0].Trail = []Verdict{{Stage: "verify", Verdict: "anchored", Reason: s, Evidence: []string{s}}}
	if n := strings.Count(Markdown(r), s); n != 1 {
		t.Errorf("verify sentence printed %d times", n)
	}
}

// Hundreds of findings dropped by triage are counted in the Markdown, not
// all listed: the first MaxDroppedListed, then how many more the JSON has.
func TestMarkdownListsAFewDroppedFindings(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	base := r.Findings[0]
	r.Dropped = nil
	for i := range 400 {
		f := base
		f.ID, f.LineStart, f.LineEnd = int64(1000+i), i+1, i+1
		f.Status, f.DropReason, f.Code = review.StatusDropped, "cap_per_risk_type", nil
		r.Dropped = append(r.Dropped, f)
	}
	md := Markdown(r)
	if n := strings.Count(md, "manager: dropped, beyond the cap per risk type"); n != MaxDroppedListed {
		t.Errorf("%d dropped findings listed, want %d", n, MaxDroppedListed)
	}
	if !strings.Contains(md, fmt.Sprintf("… and %d more, listed in the JSON report", 400-MaxDroppedListed)) {
		t.Errorf("the Markdown does not say how many more were dropped")
	}
}
