package agent

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// cutUTF8 returns the longest prefix of s of at most n bytes that does not
// split a UTF-8 sequence.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// truncateResult cuts a tool result to limit bytes, ending it with a marker
// that says how much was left out.
func truncateResult(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	kept := cutUTF8(s, limit)
	return kept + fmt.Sprintf("\n[truncated: %d more bytes not shown; narrow the request]", len(s)-len(kept))
}

// normalizeSpace collapses every run of white space to one space and trims
// the ends, so quotes compare equal whatever their indentation or wrapping.
func normalizeSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
