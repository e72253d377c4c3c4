package agent

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// facts records, whitespace-normalised, every successful tool result of the
// run; tool_fact checks are decided against it. Error results are not facts:
// they echo the model's own arguments.
type facts struct {
	results []string
}

// lineNumber is the "12: " prefix read_file puts before each line.
var lineNumber = regexp.MustCompile(`(?m)^\d+: `)

// add records a tool result. read_file results are also recorded without
// their line numbers, so a quote spanning several lines can match.
func (f *facts) add(tool, text string) {
	f.results = append(f.results, normalizeSpace(text))
	if tool == toolReadFile {
		f.results = append(f.results, normalizeSpace(lineNumber.ReplaceAllString(text, "")))
	}
}

// contains reports whether match appears in a recorded result.
func (f *facts) contains(match string) bool {
	m := normalizeSpace(match)
	if m == "" {
		return false
	}
	for _, r := range f.results {
		if strings.Contains(r, m) {
			return true
		}
	}
	return false
}

// CheckSpecific is the kind of the check the gate adds itself when a
// conclusive verdict carries no specific evidence.
const CheckSpecific = "specific_evidence"

// citation is where the finding points: a confirming quote must sit within
// window lines of it.
type citation struct {
	path       string
	start, end int
	window     int
}

// acceptGate checks every evidence item deterministically against the
// snapshot and the recorded tool results. It reports each outcome and
// whether every required check passed.
//
// A conclusive verdict must also carry specific evidence (the gate
// accepts only facts it can check): a passed
// content_contains check with a line range whose quote holds at least one
// full line of the file. For "confirmed" that quote must sit in the cited
// file within the window of the cited lines; for "refuted" it is the code
// that refutes and may be anywhere. A file_exists check, a fragment of a
// line or a whole-file search is not enough. Missing such evidence adds a
// failed required specific_evidence check.
func acceptGate(sb *sandbox, f *facts, checks []Check, verdict string, cite citation) ([]CheckResult, bool) {
	results := make([]CheckResult, 0, len(checks)+1)
	ok := true
	specific := false
	for _, c := range checks {
		var passed bool
		var detail string
		if c.Kind == CheckContentContains {
			q := contentContains(sb, c)
			passed, detail = q.passed, q.detail
			if q.passed && q.fullLine && c.StartLine > 0 && (verdict != review.VerdictConfirmed || cite.near(q)) {
				specific = true
			}
		} else {
			passed, detail = runCheck(sb, f, c)
		}
		results = append(results, CheckResult{Check: c, Passed: passed, Detail: detail})
		if c.Required && !passed {
			ok = false
		}
	}
	if ok && (verdict == review.VerdictConfirmed || verdict == review.VerdictRefuted) && !specific {
		detail := "no passed content_contains check quotes a full line at a given line range"
		if verdict == review.VerdictConfirmed {
			detail = fmt.Sprintf("no passed content_contains check quotes a full line of %s within %d lines of %d-%d",
				cite.path, cite.window, cite.start, cite.end)
		}
		results = append(results, CheckResult{Check: Check{Kind: CheckSpecific, Path: cite.path, StartLine: cite.start, EndLine: cite.end, Required: true},
			Detail: detail})
		ok = false
	}
	return results, ok
}

// near reports whether a quote found at q lies in the cited file within
// the window of the cited lines.
func (c citation) near(q quote) bool {
	if path.Clean(strings.TrimPrefix(c.path, "./")) != q.rel {
		return false
	}
	return q.end >= c.start-c.window && q.start <= c.end+c.window
}

func runCheck(sb *sandbox, f *facts, c Check) (bool, string) {
	switch c.Kind {
	case CheckFileExists:
		_, rel, err := sb.readFile(c.Path)
		if err != nil {
			return false, err.Error()
		}
		return true, rel + " exists"
	case CheckContentContains:
		q := contentContains(sb, c)
		return q.passed, q.detail
	case CheckToolFact:
		if f.contains(c.Match) {
			return true, "the match appears in a tool result of this run"
		}
		return false, "no tool result of this run contains the match"
	}
	return false, fmt.Sprintf("unknown check kind %q", c.Kind)
}

// quote is the outcome of a content_contains check: where it looked and
// whether the match covers at least one full, non-blank line there.
type quote struct {
	passed, fullLine bool
	detail, rel      string
	start, end       int
}

// contentContains checks that c.Match appears, whitespace-normalised, in
// lines [StartLine, EndLine] of c.Path (the whole file when both are zero,
// line StartLine alone when only EndLine is zero).
func contentContains(sb *sandbox, c Check) quote {
	data, rel, err := sb.readFile(c.Path)
	if err != nil {
		return quote{detail: err.Error()}
	}
	if isBinary(data) {
		return quote{detail: rel + " is a binary file"}
	}
	lines := splitLines(data)
	start, end := c.StartLine, c.EndLine
	switch {
	case start == 0 && end == 0:
		start, end = 1, len(lines)
	case end == 0:
		end = start
	}
	if start < 1 || start > len(lines) || end < start {
		return quote{detail: fmt.Sprintf("lines %d-%d are outside %s (%d lines)", start, end, rel, len(lines))}
	}
	end = min(end, len(lines))
	span := fmt.Sprintf("%s lines %d-%d", rel, start, end)
	m := normalizeSpace(c.Match)
	if m == "" || !strings.Contains(normalizeSpace(strings.Join(lines[start-1:end], "\n")), m) {
		return quote{detail: "not found in " + span, rel: rel}
	}
	q := quote{passed: true, detail: "found in " + span, rel: rel, start: start, end: end}
	for _, l := range lines[start-1 : end] {
		if n := normalizeSpace(l); len(n) >= minQuoteLine && strings.Contains(m, n) {
			q.fullLine = true
			break
		}
	}
	return q
}

// minQuoteLine is the shortest line (whitespace-normalised) that counts as
// a full-line quote: "}" or "return" says nothing about the code.
const minQuoteLine = 8
