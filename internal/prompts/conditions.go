package prompts

import (
	"regexp"
	"slices"
)

// maxConditionLines bounds the pairwise comparison of removed and added
// condition lines in one hunk, so a rewritten file costs linear time.
const maxConditionLines = 200

var (
	conditionRe = regexp.MustCompile(`\b(if|elif|elsif|unless|while|until|when)\b|\belse if\b`)
	tokenRe     = regexp.MustCompile(`[A-Za-z_]\w*|\d+(\.\d+)?|!==|===|!=|==|<=|>=|&&|\|\||[^\s\w]`)
)

// operators are the comparison and boolean tokens whose swap flips a
// condition.
var operators = []string{"==", "!=", "===", "!==", "<", ">", "<=", ">=", "&&", "||", "and", "or", "if", "unless"}

// predicatePrefixes are first words of identifiers that name a yes/no
// property, such as isEnabled or has_access.
var predicatePrefixes = []string{"is", "has", "can", "should", "allow", "allowed", "enable", "enabled",
	"disable", "disabled", "valid", "invalid", "active", "inactive", "visible", "hidden", "may", "must",
	"need", "needs", "use", "uses", "was", "did", "will"}

// flippedCondition fires when a hunk replaces a condition by one that
// differs only in a negation, one operator, one number or one predicate
// name: the rewrites most likely to invert or shift behaviour.
func flippedCondition(c *change) (string, bool) {
	for h := range c.added {
		removed := conditionTokens(c.removed[h])
		if len(removed) == 0 {
			continue
		}
		for _, a := range c.added[h] {
			if !conditionRe.MatchString(a.text) {
				continue
			}
			at := tokenRe.FindAllString(a.text, -1)
			for _, rt := range removed {
				if conditionFlipped(rt, at) {
					return a.text, true
				}
			}
		}
	}
	return "", false
}

// conditionTokens tokenises the condition lines among lines.
func conditionTokens(lines []codeLine) [][]string {
	var out [][]string
	for _, l := range lines {
		if len(out) == maxConditionLines {
			break
		}
		if conditionRe.MatchString(l.text) {
			out = append(out, tokenRe.FindAllString(l.text, -1))
		}
	}
	return out
}

// conditionFlipped reports whether b is a rewrite of a that adds or drops one
// negation, or swaps exactly one operator, number or predicate name.
func conditionFlipped(a, b []string) bool {
	switch len(b) - len(a) {
	case 1:
		return differsByNegation(a, b)
	case -1:
		return differsByNegation(b, a)
	case 0:
	default:
		return false
	}
	diff := -1
	for i := range a {
		if a[i] != b[i] {
			if diff >= 0 {
				return false
			}
			diff = i
		}
	}
	if diff < 0 {
		return false
	}
	x, y := a[diff], b[diff]
	switch {
	case slices.Contains(operators, x) && slices.Contains(operators, y):
		return true
	case isNumber(x) && isNumber(y):
		return true
	default:
		return isPredicate(x) && isPredicate(y)
	}
}

// differsByNegation reports whether long is short with one "!" or "not"
// inserted.
func differsByNegation(short, long []string) bool {
	for i := range long {
		if (long[i] == "!" || long[i] == "not") && slices.Equal(short[:i], long[:i]) && slices.Equal(short[i:], long[i+1:]) {
			return true
		}
	}
	return false
}

func isNumber(tok string) bool { return tok != "" && tok[0] >= '0' && tok[0] <= '9' }

// isPredicate reports whether an identifier names a yes/no property.
func isPredicate(tok string) bool {
	words := splitIdent(tok)
	return len(words) > 1 && slices.Contains(predicatePrefixes, words[0])
}
