package agent

import (
	"fmt"
	"regexp"
	"strings"
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

// acceptGate checks every evidence item deterministically against the
// snapshot and the recorded tool results. It reports each outcome and
// whether every required check passed.
func acceptGate(sb *sandbox, f *facts, checks []Check) ([]CheckResult, bool) {
	results := make([]CheckResult, len(checks))
	ok := true
	for i, c := range checks {
		passed, detail := runCheck(sb, f, c)
		results[i] = CheckResult{Check: c, Passed: passed, Detail: detail}
		if c.Required && !passed {
			ok = false
		}
	}
	return results, ok
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
		return contentContains(sb, c)
	case CheckToolFact:
		if f.contains(c.Match) {
			return true, "the match appears in a tool result of this run"
		}
		return false, "no tool result of this run contains the match"
	}
	return false, fmt.Sprintf("unknown check kind %q", c.Kind)
}

// contentContains checks that c.Match appears, whitespace-normalised, in
// lines [StartLine, EndLine] of c.Path (the whole file when both are zero,
// line StartLine alone when only EndLine is zero).
func contentContains(sb *sandbox, c Check) (bool, string) {
	data, rel, err := sb.readFile(c.Path)
	if err != nil {
		return false, err.Error()
	}
	if isBinary(data) {
		return false, rel + " is a binary file"
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
		return false, fmt.Sprintf("lines %d-%d are outside %s (%d lines)", start, end, rel, len(lines))
	}
	end = min(end, len(lines))
	span := fmt.Sprintf("%s lines %d-%d", rel, start, end)
	if strings.Contains(normalizeSpace(strings.Join(lines[start-1:end], "\n")), normalizeSpace(c.Match)) {
		return true, "found in " + span
	}
	return false, "not found in " + span
}
