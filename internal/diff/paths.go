package diff

import (
	"errors"
	"strings"
)

// devNull is the path a diff uses for the missing side of an added or
// deleted file.
const devNull = "/dev/null"

// prefixPairs are the (old, new) path prefixes git writes: the defaults and
// the diff.mnemonicPrefix ones. A diff made with --no-prefix has none.
var prefixPairs = [...][2]string{
	{"a/", "b/"},
	{"i/", "w/"},
	{"c/", "w/"},
	{"c/", "i/"},
	{"o/", "w/"},
	{"1/", "2/"},
}

// unquotePrefix decodes the C-style quoted string at the start of s (git's
// quoting of unusual path names) and returns it with the number of bytes it
// took, closing quote included.
func unquotePrefix(s string) (string, int, error) {
	if s == "" || s[0] != '"' {
		return "", 0, errors.New("missing opening quote")
	}
	var b []byte
	for i := 1; i < len(s); {
		c := s[i]
		switch c {
		case '"':
			return string(b), i + 1, nil
		case '\\':
			if i+1 >= len(s) {
				return "", 0, errors.New("unterminated escape")
			}
			e := s[i+1]
			i += 2
			switch e {
			case 'a':
				b = append(b, '\a')
			case 'b':
				b = append(b, '\b')
			case 't':
				b = append(b, '\t')
			case 'n':
				b = append(b, '\n')
			case 'v':
				b = append(b, '\v')
			case 'f':
				b = append(b, '\f')
			case 'r':
				b = append(b, '\r')
			case '"', '\\':
				b = append(b, e)
			case '0', '1', '2', '3':
				if i+1 >= len(s) || !isOctal(s[i]) || !isOctal(s[i+1]) {
					return "", 0, errors.New("bad octal escape")
				}
				b = append(b, (e-'0')<<6|(s[i]-'0')<<3|(s[i+1]-'0'))
				i += 2
			default:
				return "", 0, errors.New("unknown escape \\" + string(e))
			}
		default:
			b = append(b, c)
			i++
		}
	}
	return "", 0, errors.New("missing closing quote")
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// unquoteAll decodes s, which must be exactly one quoted string.
func unquoteAll(s string) (string, error) {
	v, n, err := unquotePrefix(s)
	if err != nil {
		return "", err
	}
	if n != len(s) {
		return "", errors.New("text after closing quote")
	}
	return v, nil
}

// needsQuote reports whether git would quote path p.
func needsQuote(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < 0x20 || c == 0x7f || c >= 0x80 || c == '"' || c == '\\' {
			return true
		}
	}
	return false
}

// quotePath returns p as git writes it: unchanged when it is plain, otherwise
// in double quotes with C escapes and octal for other bytes.
func quotePath(p string) string {
	if !needsQuote(p) {
		return p
	}
	return quoteAlways(p)
}

// quoteAlways returns p in double quotes with C escapes and octal for other
// bytes, even when it is plain.
func quoteAlways(p string) string {
	var b strings.Builder
	b.Grow(len(p) + 8)
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		default:
			if c < 0x20 || c >= 0x7f {
				b.WriteByte('\\')
				b.WriteByte('0' + c>>6)
				b.WriteByte('0' + c>>3&7)
				b.WriteByte('0' + c&7)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// headerPath decodes the path field of a ---/+++, rename or copy line: a
// quoted string, or the text up to the first tab (after which diff -u puts a
// timestamp and git puts nothing).
func headerPath(s string) (string, error) {
	if strings.HasPrefix(s, `"`) {
		v, n, err := unquotePrefix(s)
		if err != nil {
			return "", err
		}
		if rest := s[n:]; rest != "" && rest[0] != '\t' && strings.TrimSpace(rest) != "" {
			return "", errors.New("text after closing quote")
		}
		return v, nil
	}
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	return s, nil
}

// splitGitPaths splits the operand of a "diff --git" line into its two paths,
// prefixes still attached. ambiguous is set when unquoted paths contain
// spaces and the split could not be settled; the caller must then find the
// paths in later header lines.
func splitGitPaths(rest string) (a, b string, ambiguous bool, err error) {
	if strings.HasPrefix(rest, `"`) {
		a, n, err := unquotePrefix(rest)
		if err != nil {
			return "", "", false, err
		}
		tail := rest[n:]
		if !strings.HasPrefix(tail, " ") {
			return "", "", false, errors.New("no space after the first path")
		}
		tail = tail[1:]
		if strings.HasPrefix(tail, `"`) {
			b, err = unquoteAll(tail)
			if err != nil {
				return "", "", false, err
			}
			return a, b, false, nil
		}
		if tail == "" {
			return "", "", false, errors.New("second path is missing")
		}
		return a, tail, false, nil
	}
	if strings.HasSuffix(rest, `"`) {
		for i := strings.Index(rest, ` "`); i >= 0; {
			if b, err := unquoteAll(rest[i+1:]); err == nil && i > 0 {
				return rest[:i], b, false, nil
			}
			j := strings.Index(rest[i+1:], ` "`)
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	// Both paths unquoted. When old and new name agree (everything but
	// renames and copies) the line is "X Y" with X and Y equal after their
	// prefixes, so the split is in the middle.
	if n := len(rest); n%2 == 1 && rest[n/2] == ' ' {
		x, y := rest[:n/2], rest[n/2+1:]
		if x == y {
			return x, y, false, nil
		}
		for _, p := range prefixPairs {
			if strings.HasPrefix(x, p[0]) && strings.HasPrefix(y, p[1]) && x[2:] == y[2:] {
				return x, y, false, nil
			}
		}
	}
	// Otherwise split before a new-side prefix, or at the only space.
	var splits []int
	for i := 1; i < len(rest); i++ {
		if rest[i-1] == ' ' {
			splits = append(splits, i-1)
		}
	}
	if len(splits) == 0 {
		return "", "", false, errors.New("cannot find two paths")
	}
	if len(splits) == 1 {
		return rest[:splits[0]], rest[splits[0]+1:], false, nil
	}
	for _, p := range prefixPairs {
		if !strings.HasPrefix(rest, p[0]) {
			continue
		}
		var hits []int
		for _, s := range splits {
			if strings.HasPrefix(rest[s+1:], p[1]) {
				hits = append(hits, s)
			}
		}
		if len(hits) == 1 {
			return rest[:hits[0]], rest[hits[0]+1:], false, nil
		}
		if len(hits) > 1 {
			// Still ambiguous, but both candidates carry this prefix pair:
			// split at one of them so that the prefixes are recognised
			// and stripped from the paths the ---/+++ lines give.
			return rest[:hits[0]], rest[hits[0]+1:], true, nil
		}
	}
	return rest[:splits[0]], rest[splits[0]+1:], true, nil
}

// gitPrefixes returns the prefixes a "diff --git a b" header uses, or empty
// strings for a --no-prefix diff.
func gitPrefixes(a, b string) (oldPre, newPre string) {
	for _, p := range prefixPairs {
		if strings.HasPrefix(a, p[0]) && strings.HasPrefix(b, p[1]) {
			return p[0], p[1]
		}
	}
	return "", ""
}

// plainPrefixes guesses the prefixes of a diff without a "diff --git" line
// from its ---/+++ paths; /dev/null fits any prefix.
func plainPrefixes(a, b string) (oldPre, newPre string) {
	for _, p := range prefixPairs {
		okA := a == devNull || strings.HasPrefix(a, p[0])
		okB := b == devNull || strings.HasPrefix(b, p[1])
		if okA && okB && (a != devNull || b != devNull) {
			return p[0], p[1]
		}
	}
	return "", ""
}

// stripPrefix removes pre from p unless p is /dev/null.
func stripPrefix(p, pre string) string {
	if p == devNull {
		return p
	}
	return strings.TrimPrefix(p, pre)
}
