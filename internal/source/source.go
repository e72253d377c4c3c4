// Package source reads head-side file contents for prompts and reports:
// splitting into lines, cutting numbered windows around cited lines.
package source

import (
	"fmt"
	"strings"
)

// Line is one numbered line of a file (numbers start at 1).
type Line struct {
	No   int
	Text string
}

// Split splits content into lines, accepting LF and CRLF endings. A final
// newline does not start an extra empty line.
func Split(content string) []string {
	if content == "" {
		return nil
	}
	content = strings.TrimSuffix(content, "\n")
	lines := strings.Split(content, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// Window returns lines [start-context, end+context] of content, clipped to
// the file. It returns nil when the range lies wholly outside the file.
func Window(content string, start, end, context int) []Line {
	lines := Split(content)
	if end < start {
		start, end = end, start
	}
	if start > len(lines) || end < 1 {
		return nil
	}
	from, to := max(1, start-context), min(len(lines), end+context)
	out := make([]Line, 0, to-from+1)
	for n := from; n <= to; n++ {
		out = append(out, Line{No: n, Text: lines[n-1]})
	}
	return out
}

// Format renders numbered lines, one per row, as "  42 | text".
func Format(lines []Line) string {
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "%5d | %s\n", l.No, l.Text)
	}
	return b.String()
}

// Excerpt renders the file with line numbers, whole when it has at most
// maxLines lines, otherwise only windows of `context` lines around each of
// the given lines (ascending), with "…" between windows.
func Excerpt(content string, focus []int, context, maxLines int) string {
	lines := Split(content)
	if len(lines) <= maxLines || len(focus) == 0 {
		all := make([]Line, 0, min(len(lines), maxLines))
		for i, t := range lines {
			if i >= maxLines {
				break
			}
			all = append(all, Line{No: i + 1, Text: t})
		}
		out := Format(all)
		if len(lines) > maxLines {
			out += fmt.Sprintf("  … (%d more lines not shown)\n", len(lines)-maxLines)
		}
		return out
	}
	var b strings.Builder
	last := 0
	shown := 0
	for _, f := range focus {
		from, to := max(last+1, f-context), min(len(lines), f+context)
		if from > to {
			continue
		}
		if from > last+1 {
			b.WriteString("  …\n")
		}
		for n := from; n <= to && shown < maxLines; n++ {
			fmt.Fprintf(&b, "%5d | %s\n", n, lines[n-1])
			shown++
		}
		last = to
	}
	if last < len(lines) {
		b.WriteString("  …\n")
	}
	return b.String()
}
