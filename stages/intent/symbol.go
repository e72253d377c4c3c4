package intent

import (
	"strconv"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/fingerprint"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// enclosingSymbol names the declaration a finding on line sits in: from
// the head content when the review holds it, otherwise from the section
// text of the last hunk header at or above the line.
func enclosingSymbol(files []review.File, path string, line int) string {
	for _, f := range files {
		if f.Path != path {
			continue
		}
		if f.Content != nil {
			return fingerprint.Symbol(path, *f.Content, line)
		}
		return fingerprint.HunkSymbol(path, hunkSection(f.Diff, line))
	}
	return ""
}

// hunkSection returns the text after the "@@ … @@" of the last hunk of a
// diff that starts at or above new-side line.
func hunkSection(diffText string, line int) string {
	section := ""
	for _, l := range strings.Split(diffText, "\n") {
		if !strings.HasPrefix(l, "@@ ") {
			continue
		}
		rest, ok := strings.CutPrefix(l, "@@ ")
		if !ok {
			continue
		}
		ranges, text, ok := strings.Cut(rest, " @@")
		if !ok {
			continue
		}
		start := 0
		for _, r := range strings.Fields(ranges) {
			if n, ok := strings.CutPrefix(r, "+"); ok {
				n, _, _ = strings.Cut(n, ",")
				start, _ = strconv.Atoi(n)
			}
		}
		if start > line {
			break
		}
		section = text
	}
	return section
}
