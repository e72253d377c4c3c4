package prompts

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// linePattern is a signal's regular expression with the literals one of
// which every match holds. Most changed lines hold none of a signal's
// words, and looking for a few substrings is far cheaper than running the
// pattern over the line: the detector runs dozens of patterns over every
// changed line of every file an intent item plans.
type linePattern struct {
	re *regexp.Regexp
	// lits are lower-cased ASCII; nil when the pattern requires no literal
	// (it may match a line holding none).
	lits []string
}

// compileLine compiles expr and derives its required literals.
func compileLine(expr string) linePattern {
	p := linePattern{re: regexp.MustCompile(expr)}
	parsed, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return p // MustCompile accepted it; the pattern runs on every line
	}
	if lits, ok := requiredLiterals(parsed.Simplify()); ok && len(lits) > 0 {
		p.lits = lits
	}
	return p
}

// match reports whether the pattern matches l.
func (p linePattern) match(l codeLine) bool {
	if p.lits != nil && l.ascii && !containsAny(l.lower, p.lits) {
		return false
	}
	return p.re.MatchString(l.text)
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// requiredLiterals returns strings, lower-cased, one of which every match
// of re contains; ok is false when there is no such set (a match may be
// made of character classes alone, or may be empty). Lower-casing both the
// literals and the line keeps the test necessary for case-insensitive
// parts too, as long as the line is ASCII: Unicode folds letters outside
// ASCII onto k and s, so non-ASCII lines always run the pattern.
func requiredLiterals(re *syntax.Regexp) (lits []string, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		s := string(re.Rune)
		if !isASCII(s) {
			return nil, false
		}
		return []string{strings.ToLower(s)}, true
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min < 1 {
			return nil, false
		}
		return requiredLiterals(re.Sub[0])
	case syntax.OpConcat:
		// Any one part's literals will do: keep the most selective.
		for _, sub := range re.Sub {
			if l, ok := requiredLiterals(sub); ok && better(l, lits) {
				lits = l
			}
		}
		return lits, lits != nil
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			l, ok := requiredLiterals(sub)
			if !ok {
				return nil, false
			}
			lits = append(lits, l...)
		}
		return lits, true
	default:
		return nil, false
	}
}

// better reports whether literal set a rejects more lines than b: a
// longer shortest literal, then fewer literals.
func better(a, b []string) bool {
	if b == nil {
		return true
	}
	if sa, sb := shortest(a), shortest(b); sa != sb {
		return sa > sb
	}
	return len(a) < len(b)
}

func shortest(lits []string) int {
	n := -1
	for _, l := range lits {
		if n < 0 || len(l) < n {
			n = len(l)
		}
	}
	return n
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// lowerASCII lower-cases the ASCII letters of s and reports whether s is
// all ASCII.
func lowerASCII(s string) (string, bool) {
	if !isASCII(s) {
		return "", false
	}
	return strings.ToLower(s), true
}
