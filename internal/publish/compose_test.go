package publish

import (
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/feedback"
	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// anchors: a.go has hunks over lines 1-4 (index 0) and 20-22 (index 1).
var testAnchors = Anchors{"a.go": {1: 0, 2: 0, 3: 0, 4: 0, 20: 1, 21: 1, 22: 1}}

func TestAnchorsRange(t *testing.T) {
	for _, tc := range []struct {
		start, end, from, to int
		ok                   bool
	}{
		{2, 3, 2, 3, true},
		{3, 2, 2, 3, true},    // reversed
		{3, 21, 21, 21, true}, // across hunks: the end line alone
		{3, 30, 3, 3, true},   // the end is outside: the start alone
		{10, 12, 0, 0, false}, // between hunks
		{0, 0, 0, 0, false},   // no line
	} {
		from, to, ok := testAnchors.Range("a.go", tc.start, tc.end)
		if from != tc.from || to != tc.to || ok != tc.ok {
			t.Errorf("Range(%d, %d) = %d, %d, %v; want %d, %d, %v", tc.start, tc.end, from, to, ok, tc.from, tc.to, tc.ok)
		}
	}
	if _, _, ok := testAnchors.Range("b.go", 1, 1); ok {
		t.Error("a file outside the pull request is commentable")
	}
}

func TestSuggestionOnlyForContiguousReplacement(t *testing.T) {
	base := review.Finding{File: "a.go", LineStart: 2, LineEnd: 2, RiskType: "correctness", Severity: review.High, Description: "d"}
	for _, tc := range []struct {
		name, fix string
		want      bool
	}{
		{"one hunk over commentable lines", "@@ -2,2 +2,1 @@\n-x\n-y\n+z\n", true},
		{"two hunks", "@@ -2,1 +2,1 @@\n-x\n+z\n@@ -20,1 +20,1 @@\n-p\n+q\n", false},
		{"pure insertion", "@@ -2,0 +3,1 @@\n+z\n", false},
		{"lines outside the diff", "@@ -8,1 +8,1 @@\n-x\n+z\n", false},
		{"malformed", "not a diff", false},
	} {
		f := base
		f.Fix = tc.fix
		p := MakePlan([]render.Finding{{Finding: f}}, testAnchors, nil, nil, true)
		if len(p.Inline) != 1 {
			t.Fatalf("%s: %d inline comments, want 1", tc.name, len(p.Inline))
		}
		if got := strings.Contains(p.Inline[0].Body, "```suggestion"); got != tc.want {
			t.Errorf("%s: suggestion block %v, want %v:\n%s", tc.name, got, tc.want, p.Inline[0].Body)
		}
	}
}

func TestFingerprintIgnoresLinesAndWording(t *testing.T) {
	a := review.Finding{File: "./a.go", LineStart: 3, RiskType: "security", Description: "Token leaks, here!"}
	b := review.Finding{File: "a.go", LineStart: 30, RiskType: "security", Description: "token   leaks,  here!"}
	if render.Fingerprint(a) != render.Fingerprint(b) {
		t.Error("the same finding moved down has another fingerprint")
	}
	c := b
	c.RiskType = "correctness"
	if render.Fingerprint(c) == render.Fingerprint(b) {
		t.Error("another risk type has the same fingerprint")
	}
	if fp := render.Fingerprint(a); feedback.FingerprintIn("text\n"+feedback.FindingMarker(fp)) != fp {
		t.Error("a comment's marker does not give back its fingerprint")
	}
}

// The summary says which repository configuration files were invalid and
// ignored, with their lines, and how many findings were resolved.
func TestSummaryReportsConfigWarningsAndResolved(t *testing.T) {
	gone := review.Finding{File: "a.go", LineStart: 3, LineEnd: 3, RiskType: "robustness", Description: "nil map\nwrite"}
	rep := &render.Report{
		ConfigWarnings: []render.ConfigWarning{{File: "svc/.reviewfleet.yaml", Line: 4, Message: "field ignroe not found"}},
		Resolved: []render.Finding{{Finding: gone},
			{Finding: review.Finding{File: "b.go", LineStart: 9, LineEnd: 9, RiskType: "security", Description: "never commented"}}},
	}
	threads := map[string]string{render.Fingerprint(gone): "https://github.com/o/r/pull/1#discussion_r7"}
	body := Summary(rep, "0123456789abcdef", Plan{Threads: threads}, "")
	for _, want := range []string{"`svc/.reviewfleet.yaml:4`: field ignroe not found", "Resolved since the previous review: 2",
		"- ~~`a.go:3`~~ · robustness: nil map write ([comment](https://github.com/o/r/pull/1#discussion_r7))",
		"- ~~`b.go:9`~~ · security: never commented\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("summary lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(Summary(&render.Report{}, "0123", Plan{}, ""), "repository configuration") {
		t.Error("a summary without warnings mentions the repository configuration")
	}
}

// Errors posted on a pull request name no address of the fleet's own
// services.
func TestPublicErrorHidesAddresses(t *testing.T) {
	in := "chat completion: Post \"https://llm.internal:8443/v1/chat/completions\": dial tcp 10.1.2.3:8443: connection refused; postgres://rf@db.internal/rf failed [fd00::1]:5432"
	got := publicError(in)
	for _, leak := range []string{"llm.internal", "10.1.2.3", "db.internal", "fd00::1"} {
		if strings.Contains(got, leak) {
			t.Errorf("posted error keeps %q: %s", leak, got)
		}
	}
	if !strings.Contains(got, "connection refused") {
		t.Errorf("posted error lost its reason: %s", got)
	}
	if n := len([]rune(publicError(strings.Repeat("x ", 400)))); n > 301 {
		t.Errorf("posted error of %d characters, want at most 301", n)
	}
}
