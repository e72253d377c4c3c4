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
		// Any one part's literals will do, and so will the strings a run
		// of parts matching finitely many strings spells ("n" then "il" or
		// "ull": nil, null): keep the most selective.
		var run []string
		fresh := true
		for _, sub := range re.Sub {
			if l, ok := requiredLiterals(sub); ok && better(l, lits) {
				lits = l
			}
			set, ok := exactStrings(sub)
			switch {
			case !ok:
				run, fresh = nil, true
				continue
			case fresh:
				run, fresh = set, false
			default:
				if run = cross(run, set, false); run == nil {
					run = set // too many: start again from here
				}
			}
			if run != nil && shortest(run) > 0 && better(run, lits) {
				lits = run
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

// maxExact bounds the strings exactStrings and cross enumerate.
const maxExact = 32

// exactStrings returns, lower-cased, every string re matches when they are
// few (at most maxExact) and ASCII; empty-width assertions match "".
func exactStrings(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpBeginText, syntax.OpEndText:
		return []string{""}, true
	case syntax.OpLiteral:
		s := string(re.Rune)
		if !isASCII(s) {
			return nil, false
		}
		return []string{strings.ToLower(s)}, true
	case syntax.OpCapture:
		return exactStrings(re.Sub[0])
	case syntax.OpQuest:
		set, ok := exactStrings(re.Sub[0])
		if !ok || len(set) == maxExact {
			return nil, false
		}
		return append(set, ""), true
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			set, ok := exactStrings(sub)
			if !ok || len(all)+len(set) > maxExact {
				return nil, false
			}
			all = append(all, set...)
		}
		return all, true
	case syntax.OpConcat:
		var all []string
		for i, sub := range re.Sub {
			set, ok := exactStrings(sub)
			if !ok {
				return nil, false
			}
			if all = cross(all, set, i == 0); all == nil {
				return nil, false
			}
		}
		return all, true
	default:
		return nil, false
	}
}

// cross returns every a followed by every b (b alone when first), or nil
// when that is more than maxExact strings.
func cross(a, b []string, first bool) []string {
	if first {
		return b
	}
	if a == nil || len(a)*len(b) > maxExact {
		return nil
	}
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return out
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
