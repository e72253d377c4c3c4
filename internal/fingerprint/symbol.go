package fingerprint

import (
	"path"
	"regexp"
	"strings"
)

var (
	// Go: "func Name(", "func (r *Recv) Name(", "func (Recv[T]) Name[" and
	// "type Name …" at the start of a line.
	goFunc = regexp.MustCompile(`^func\s*(?:\(\s*(?:\w+\s+)?\*?\s*(\w+)[^)]*\)\s*)?(\w+)\s*[\[(]`)
	goType = regexp.MustCompile(`^type\s+(\w+)`)
	// Other languages: the usual declaration keywords (Python, JS/TS,
	// Rust, Ruby, Kotlin, Swift, PHP, shell functions), and a C-like
	// "type name(args) {" header.
	keywordDecl = regexp.MustCompile(`^\s*(?:(?:export|default|pub(?:\([^)]*\))?|public|private|protected|internal|static|async|abstract|final|override|open|unsafe|extern\s+"C")\s+)*` +
		`(?:def|class|function\*?|fn|fun|func|module|interface|struct|enum|trait|impl(?:<[^>]*>)?|object|sub)\s+([A-Za-z_$][\w$]*(?:::\w+)?)`)
	cLike = regexp.MustCompile(`^[A-Za-z_][\w:<>,*&\s]*?\b([A-Za-z_][\w:~]*)\s*\([^;]*\)\s*(?:const\s*)?(?:\{|$)`)
	notC  = regexp.MustCompile(`^\s*(?:if|for|while|switch|return|else|catch|do|case)\b`)
)

// Symbol returns the name of the declaration enclosing line (1-based) of a
// file's content: "Name" or "Recv.Name" for Go functions and methods, the
// type name inside a Go type declaration, and otherwise the nearest
// function, class or similar declaration above the line (Python, JS/TS,
// Rust, Java/C-like). It returns "" at file level or when nothing fits.
//
// The scan is deliberately light: it reads declaration headers upwards and
// uses indentation to leave a declaration that ended (a Go declaration
// ends at a closing brace in column 0; elsewhere, a non-blank line at or
// left of a declaration's indentation that is not the declaration closes it).
func Symbol(filePath, content string, line int) string {
	lines := strings.Split(content, "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	if path.Ext(filePath) == ".go" {
		return goSymbol(lines, line)
	}
	return genericSymbol(lines, line)
}

func goSymbol(lines []string, line int) string {
	for i := line - 1; i >= 0; i-- {
		l := lines[i]
		if i < line-1 && (l == "}" || l == ")") {
			return "" // the previous declaration ended above the line
		}
		if m := goFunc.FindStringSubmatch(l); m != nil {
			if m[1] != "" {
				return m[1] + "." + m[2]
			}
			return m[2]
		}
		if m := goType.FindStringSubmatch(l); m != nil {
			return m[1]
		}
	}
	return ""
}

func genericSymbol(lines []string, line int) string {
	// minIndent is the smallest indentation seen so far walking up: a
	// declaration encloses the line only if it is indented less than
	// everything between them (or is the line itself).
	minIndent := -1
	for i := line - 1; i >= 0; i-- {
		l := lines[i]
		if t := strings.TrimSpace(l); t == "" || t == "{" {
			continue // blank, or the brace of a declaration on the line above
		}
		ind := indent(l)
		if minIndent >= 0 && ind >= minIndent && !strings.HasPrefix(strings.TrimSpace(l), "}") {
			// Deeper than or level with what we already passed: a sibling.
			if i != line-1 {
				continue
			}
		}
		if m := keywordDecl.FindStringSubmatch(l); m != nil && (minIndent < 0 || ind < minIndent || i == line-1) {
			return m[1]
		}
		if !notC.MatchString(l) && (minIndent < 0 || ind < minIndent) {
			if m := cLike.FindStringSubmatch(l); m != nil {
				return m[1]
			}
		}
		if minIndent < 0 || ind < minIndent {
			minIndent = ind
		}
		if ind == 0 && i < line-1 && strings.TrimSpace(l) == "}" {
			return ""
		}
	}
	return ""
}

func indent(l string) int {
	n := 0
	for _, r := range l {
		switch r {
		case ' ':
			n++
		case '\t':
			n += 4
		default:
			return n
		}
	}
	return n
}

// HunkSymbol extracts a symbol from the section text git prints after a
// hunk header ("@@ -1,2 +1,3 @@ func (s *Server) Run() {"); used when the
// head content of a file is not at hand.
func HunkSymbol(filePath, section string) string {
	section = strings.TrimSpace(section)
	if section == "" {
		return ""
	}
	if path.Ext(filePath) == ".go" {
		return goSymbol([]string{section}, 1)
	}
	return genericSymbol([]string{section}, 1)
}
