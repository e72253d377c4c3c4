package render

import (
	"cmp"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// normaliseText reduces a description to lowercase words separated by single
// spaces, so that wording differences in punctuation, case and spacing do
// not make two descriptions differ.
func normaliseText(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	}), " ")
}

// cleanPath normalises a repo-relative path: forward slashes, no "./" or
// leading "/".
func cleanPath(p string) string {
	p = strings.TrimLeft(path.Clean(strings.ReplaceAll(strings.TrimSpace(p), `\`, "/")), "/")
	if p == "." {
		return ""
	}
	return p
}

// lineRange returns the finding's lines in order.
func lineRange(f review.Finding) (int, int) {
	if f.LineEnd < f.LineStart {
		return f.LineEnd, f.LineStart
	}
	return f.LineStart, f.LineEnd
}

// orderedTrail returns the trail sorted verify → expert → eval, keeping the
// given order among verdicts of the same or unknown stages.
func orderedTrail(trail []Verdict) []Verdict {
	out := slices.Clone(trail)
	slices.SortStableFunc(out, func(a, b Verdict) int {
		return cmp.Compare(stageOrder(a.Stage), stageOrder(b.Stage))
	})
	return out
}

// riskTypesInOrder returns the given risk types in review.RiskTypes order,
// followed by unknown ones sorted by name.
func riskTypesInOrder(types map[review.RiskType]bool) []review.RiskType {
	out := make([]review.RiskType, 0, len(types))
	for _, rt := range review.RiskTypes {
		if types[rt] {
			out = append(out, rt)
		}
	}
	var extra []review.RiskType
	for rt := range types {
		if !slices.Contains(review.RiskTypes, rt) {
			extra = append(extra, rt)
		}
	}
	slices.Sort(extra)
	return append(out, extra...)
}

// oneLine collapses all whitespace, newlines included, into single spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// truncate shortens s to at most n runes, marking the cut with "…".
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}

// escapeHTML replaces "<" with "&lt;" outside inline code spans, so text such
// as "returns Option<T>" is not swallowed as an HTML tag while `Vec<T>` in
// backticks stays as written. s must be a single line.
func escapeHTML(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '`' {
			run := backtickRun(s[i:])
			fence := s[i : i+run]
			if end := strings.Index(s[i+run:], fence); end >= 0 && backtickRun(s[i+run+end:]) == run {
				stop := i + run + end + run
				b.WriteString(s[i:stop])
				i = stop
				continue
			}
			b.WriteString(fence)
			i += run
			continue
		}
		if s[i] == '<' {
			b.WriteString("&lt;")
		} else {
			b.WriteByte(s[i])
		}
		i++
	}
	return b.String()
}

// backtickRun counts the backticks at the start of s.
func backtickRun(s string) int {
	n := 0
	for n < len(s) && s[n] == '`' {
		n++
	}
	return n
}

// longestRun returns the longest run of ch in s.
func longestRun(s string, ch byte) int {
	longest, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == ch {
			cur++
			longest = max(longest, cur)
		} else {
			cur = 0
		}
	}
	return longest
}

// inline renders user text that must stay on one line of Markdown (list
// items): whitespace collapsed, HTML neutralised.
func inline(s string) string {
	return escapeHTML(oneLine(s))
}

// cell renders user text for a table cell: like inline, and pipes escaped so
// they cannot split the cell.
func cell(s string) string {
	return strings.ReplaceAll(inline(s), "|", `\|`)
}

// codeSpan renders s as inline code, choosing a fence longer than any run of
// backticks inside it.
func codeSpan(s string) string {
	s = oneLine(s)
	if s == "" {
		return ""
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

// cellCode renders s as inline code inside a table cell, where a pipe must be
// escaped even within code.
func cellCode(s string) string {
	return strings.ReplaceAll(codeSpan(s), "|", `\|`)
}

// block renders multi-line user text (descriptions, suggestions) as Markdown
// that cannot break the surrounding report: raw HTML is neutralised, lines
// that would start a heading or turn the previous line into one are escaped,
// and a code fence left open is closed.
func block(s string) string {
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")), "\n")
	var (
		out   []string
		fence string // the open fence, "" outside a fenced block
	)
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if fence != "" {
			out = append(out, l)
			if closesFence(l, fence) {
				fence = ""
			}
			continue
		}
		if f := openingFence(l); f != "" {
			fence = f
			out = append(out, l)
			continue
		}
		trimmed := strings.TrimLeft(l, " \t")
		switch {
		case strings.HasPrefix(trimmed, "#"):
			l = `\` + trimmed
		case trimmed != "" && strings.Trim(trimmed, "=") == "",
			len(trimmed) >= 2 && strings.Trim(trimmed, "-") == "":
			l = `\` + trimmed
		default:
			l = escapeHTML(l)
		}
		out = append(out, l)
	}
	if fence != "" {
		out = append(out, fence)
	}
	return strings.Join(out, "\n")
}

// openingFence returns the fence ("```", "~~~~", …) a line opens, or "". As
// in CommonMark, a fence is indented by at most three spaces, and the info
// string after a backtick fence holds no backtick.
func openingFence(line string) string {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 {
		return ""
	}
	for _, ch := range []byte{'`', '~'} {
		n := 0
		for n < len(trimmed) && trimmed[n] == ch {
			n++
		}
		if n < 3 {
			continue
		}
		if ch == '`' && strings.Contains(trimmed[n:], "`") {
			return ""
		}
		return trimmed[:n]
	}
	return ""
}

// closesFence reports whether line closes a block opened by fence: the same
// character, at least as many, at most three spaces of indent, nothing else.
func closesFence(line, fence string) bool {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 {
		return false
	}
	trimmed = strings.TrimRight(trimmed, " \t")
	return strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == ""
}
