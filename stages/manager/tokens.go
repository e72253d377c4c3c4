package manager

import (
	"slices"
	"strings"
	"unicode"
)

// stopWords are dropped before descriptions are compared: they carry no
// meaning about what a finding is about.
var stopWords = map[string]struct{}{
	"an": {}, "the": {}, "is": {}, "are": {}, "was": {}, "were": {}, "be": {},
	"been": {}, "to": {}, "of": {}, "in": {}, "on": {}, "at": {}, "for": {},
	"and": {}, "or": {}, "if": {}, "it": {}, "its": {}, "this": {}, "that": {},
	"these": {}, "with": {}, "as": {}, "by": {}, "from": {}, "can": {},
	"could": {}, "may": {}, "might": {}, "will": {}, "would": {}, "when": {},
	"which": {}, "there": {}, "here": {}, "into": {}, "than": {}, "then": {},
	"so": {}, "such": {}, "has": {}, "have": {}, "had": {}, "do": {}, "does": {},
}

// tokenise splits a description into its set of comparable tokens, sorted and
// without repeats: lowercase runs of letters, digits and underscores, minus
// stop words and one-character tokens. Runs of Han characters, which are not
// separated by spaces, contribute their overlapping two-character pairs.
func tokenise(s string) []string {
	var (
		tokens []string
		word   strings.Builder
		han    []rune
	)
	flushWord := func() {
		if word.Len() == 0 {
			return
		}
		w := word.String()
		word.Reset()
		if len([]rune(w)) < 2 {
			return
		}
		if _, stop := stopWords[w]; stop {
			return
		}
		tokens = append(tokens, w)
	}
	flushHan := func() {
		for i := 0; i+1 < len(han); i++ {
			tokens = append(tokens, string(han[i:i+2]))
		}
		han = han[:0]
	}
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Han, r):
			flushWord()
			han = append(han, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			flushHan()
			word.WriteRune(unicode.ToLower(r))
		default:
			flushWord()
			flushHan()
		}
	}
	flushWord()
	flushHan()
	slices.Sort(tokens)
	return slices.Compact(tokens)
}

// jaccard is |a ∩ b| / |a ∪ b| for two sorted token sets without repeats.
// Two empty sets have nothing in common and score 0.
func jaccard(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	common := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch c := strings.Compare(a[i], b[j]); {
		case c == 0:
			common++
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	return float64(common) / float64(len(a)+len(b)-common)
}
