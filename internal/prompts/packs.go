package prompts

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/diff"
)

// Pack names a pattern pack: the detailed checklist for one risk type that
// the intent prompt carries only when the file's diff shows signs of it.
type Pack string

// The pattern packs. Their names match the risk types they describe.
const (
	PackAuthorization Pack = "authorization"
	PackConcurrency   Pack = "concurrency"
	PackIntent        Pack = "intent"
	PackLifecycle     Pack = "lifecycle"
	PackRobustness    Pack = "robustness"
	PackMemorySafety  Pack = "memory_safety"
	PackResourceLeak  Pack = "resource_leak"
)

// AllPacks lists every pack in sorted order. It is what the detector returns
// when it finds no signal, and what the fixed (full) prompt carries.
var AllPacks = []Pack{PackAuthorization, PackConcurrency, PackIntent, PackLifecycle, PackMemorySafety, PackResourceLeak, PackRobustness}

// Hit is one detector signal that fired, with the first diff line that
// fired it. Hits explain a pack selection in logs and tests.
type Hit struct {
	Signal string // the signal's name in the detector table
	Pack   Pack
	Line   string // the changed line that matched, without its marker
}

// DetectPacks selects the pattern packs a file's diff needs. It is a
// deterministic keyword detector over the added and removed lines only
// (headers, unchanged context and comment lines are ignored); path selects
// the language, which switches language-specific signals, the comment
// syntax and the import syntax. diffText is a unified diff as internal/diff
// renders it; a fragment that does not parse is read by its +/- markers.
// The result is sorted and follows three rules:
//
//   - signals fire: the packs they select;
//   - the change carries code but no signal fires: AllPacks, the
//     conservative choice;
//   - the change carries no code: no pack, so the intent prompt is the core
//     alone — unless an authorization signal fires in a configuration
//     file (a token or password committed in YAML, JSON, .env…), which
//     selects that pack. A change carries no code when the file is not a source file (its
//     extension or name is listed in nonSourceFiles: documentation, data and
//     configuration, dependency manifests, Dockerfile, Makefile…) or when
//     every added and removed line is blank, a comment (docstrings
//     included) or a package, import, include or require line.
func DetectPacks(path, diffText string) []Pack {
	return packsOf(detect(path, diffText))
}

// packsOf returns the sorted packs the hits select: none for a change
// without code, every pack for code without hits.
func packsOf(hits []Hit, code bool) []Pack {
	if len(hits) == 0 {
		if !code {
			return nil
		}
		return slices.Clone(AllPacks)
	}
	packs := make([]Pack, 0, len(AllPacks))
	for _, h := range hits {
		if !slices.Contains(packs, h.Pack) {
			packs = append(packs, h.Pack)
		}
	}
	slices.Sort(packs)
	return packs
}

// DetectSignals reports every signal of the detector table that fires on
// the diff, in table order, each once. In a non-source file only the
// language-neutral signals are read; a source change without code reports
// none.
func DetectSignals(path, diffText string) []Hit {
	hits, _ := detect(path, diffText)
	return hits
}

// detect reads a file's change: the signals that fire and whether any
// added or removed line carries code.
func detect(path, diffText string) (hits []Hit, code bool) {
	// Prose never selects a pack.
	if !isSourceFile(path) && isProse(path) {
		return nil, false
	}
	return newChange(path, diffText).signals(path)
}

// signals runs the detector table over c, the change of the file at path.
func (c *change) signals(path string) (hits []Hit, code bool) {
	if !isSourceFile(path) {
		// Configuration carries no code, but a credential committed in it
		// still deserves the authorization pack.
		for _, s := range signals {
			if len(s.langs) > 0 || s.pack != PackAuthorization {
				continue
			}
			if line, ok := s.match(c); ok {
				hits = append(hits, Hit{Signal: s.name, Pack: s.pack, Line: line})
			}
		}
		return hits, false
	}
	if !c.code {
		return nil, false
	}
	if c.lang == "style" { // style sheets carry none of the signals
		return nil, true
	}
	for _, s := range signals {
		if !s.appliesTo(c.lang) {
			continue
		}
		if line, ok := s.match(c); ok {
			hits = append(hits, Hit{Signal: s.name, Pack: s.pack, Line: line})
		}
	}
	if len(hits) > 0 && !slices.ContainsFunc(hits, func(h Hit) bool { return h.Pack == PackAuthorization }) && isAuthPath(path) {
		// Code in an auth, credential or permission file keeps the
		// authorization pack whatever its lines say: other signals must
		// not push out the pack an access-control change needs most.
		hits = append(hits, Hit{Signal: "auth path", Pack: PackAuthorization, Line: path})
	}
	return hits, true
}

// authPathWords are path words of files whose code decides who may do what.
var authPathWords = []string{"auth", "authn", "authz", "login", "logout", "session", "sessions", "password", "passwords",
	"credential", "credentials", "secret", "secrets", "token", "tokens", "permission", "permissions", "acl", "rbac",
	"oauth", "jwt", "sso", "saml", "policy", "policies", "role", "roles", "middleware", "crypto", "signin", "signup"}

// isAuthPath reports whether a word of path (directories and base name,
// split like identifiers) is an auth word.
func isAuthPath(path string) bool {
	for _, part := range strings.FieldsFunc(strings.ToLower(path), func(r rune) bool {
		return r == '/' || r == '\\' || r == '.' || r == '_' || r == '-'
	}) {
		if slices.Contains(authPathWords, part) {
			return true
		}
	}
	return false
}

// Languages the detector tells apart, keyed by file extension. Files with
// other extensions get every language-neutral and language-specific signal.
var languageByExt = map[string]string{
	".go": "go",
	".py": "python", ".pyi": "python",
	".js": "js", ".jsx": "js", ".mjs": "js", ".cjs": "js", ".ts": "js", ".tsx": "js",
	".mts": "js", ".cts": "js", ".vue": "js", ".svelte": "js",
	".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala",
	".rb": "ruby", ".rake": "ruby", ".erb": "ruby",
	".cs": "csharp", ".swift": "swift", ".rs": "rust", ".php": "php",
	".c": "c", ".h": "c", ".cc": "c", ".cpp": "c", ".hpp": "c",
	".css": "style", ".scss": "style", ".sass": "style", ".less": "style", ".styl": "style",
}

// languageOf names the language of path, or "" when the extension is not
// known.
func languageOf(path string) string {
	return languageByExt[strings.ToLower(filepath.Ext(path))]
}

// change is what the detector reads: the added and removed lines of a diff,
// comment lines left out.
type change struct {
	lang  string
	code  bool       // some added or removed line is code (see lineClass)
	lines []codeLine // added and removed lines in diff order
	// removed and added hold the same lines per hunk (index h is hunk h),
	// for signals that pair a removed line with its replacement.
	removed, added [][]codeLine
}

// codeLine is one changed line with its identifiers split into words.
type codeLine struct {
	text   string
	idents [][]string // each identifier's lower-cased words: "apiKey" → [api key]
	lower  string     // text lower-cased, when ascii
	ascii  bool       // text is all ASCII (see linePattern)
}

// newChange extracts the changed lines of diffText. Each side of a hunk is
// read by a scanner, so that block comments, docstrings and multi-line
// import lists are recognised with the help of the context lines. A text
// that does not parse as a unified diff (a bare hunk, a fragment) is read
// line by line: every line marked "+" or "-" counts as changed.
func newChange(path, diffText string) *change {
	c := &change{lang: languageOf(path)}
	files, err := diff.Parse([]byte(diffText))
	if err != nil || len(files) == 0 {
		c.addMarkedLines(diffText)
		return c
	}
	for _, f := range files {
		for _, h := range f.Hunks {
			c.addHunk(h.Lines, h.OldStart <= 1, h.NewStart <= 1)
		}
	}
	return c
}

// addHunk reads the lines of one hunk; oldTop and newTop say that a side
// starts at the file's first line. Every changed line is classified first,
// so that a side found to start inside a block comment (see scanner) can
// have its first lines reclassified before they are taken.
func (c *change) addHunk(hunk []diff.Line, oldTop, newTop bool) {
	type classified struct {
		added bool
		class lineClass
		pos   int // index on its side
		text  string
	}
	old, cur := newScanner(c.lang, oldTop), newScanner(c.lang, newTop)
	var lines []classified
	for _, l := range hunk {
		switch l.Kind {
		case diff.Added:
			class, pos := cur.line(l.Text)
			lines = append(lines, classified{true, class, pos, l.Text})
		case diff.Deleted:
			class, pos := old.line(l.Text)
			lines = append(lines, classified{false, class, pos, l.Text})
		default:
			old.line(l.Text)
			cur.line(l.Text)
		}
	}
	var rem, add []codeLine
	for _, l := range lines {
		switch {
		case l.added && l.pos < cur.headComment, !l.added && l.pos < old.headComment:
			continue
		case l.added:
			add = c.take(add, l.class, l.text)
		default:
			rem = c.take(rem, l.class, l.text)
		}
	}
	c.removed = append(c.removed, rem)
	c.added = append(c.added, add)
}

// take records a changed line of the given class on one side of a hunk and
// returns the side: comment lines are dropped, code lines mark the change
// as carrying code.
func (c *change) take(side []codeLine, class lineClass, text string) []codeLine {
	if class == lineComment {
		return side
	}
	if class == lineCode {
		c.code = true
	}
	cl := codeLine{text: text, idents: identWords(text)}
	cl.lower, cl.ascii = lowerASCII(text)
	c.lines = append(c.lines, cl)
	return append(side, cl)
}

// addMarkedLines reads text that is not a parsable diff: ---/+++ file
// headers are skipped, a line starting with "@@" starts a new hunk, lines
// marked "+" or "-" are changed and lines starting with a space are
// context. Nothing is known of where the hunks lie in the file.
func (c *change) addMarkedLines(text string) {
	var hunk []diff.Line
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSuffix(l, "\r")
		switch {
		case l == "" || strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "--- "):
		case strings.HasPrefix(l, "@@"):
			c.addHunk(hunk, false, false)
			hunk = nil
		case l[0] == '+' || l[0] == '-' || l[0] == ' ':
			hunk = append(hunk, diff.Line{Kind: diff.LineKind(l[0]), Text: l[1:]})
		}
	}
	c.addHunk(hunk, false, false)
}

// isComment reports whether line holds only a comment in lang, or is
// blank. Unknown languages accept every common comment syntax. A line
// starting with "* " counts as the inside of a block comment, except in
// style sheets, where "*" is a selector.
func isComment(lang, line string) bool {
	t := strings.TrimSpace(line)
	if t == "" {
		return true
	}
	slashes := strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*/")
	star := t == "*" || strings.HasPrefix(t, "* ")
	hash := strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "#{") && !strings.HasPrefix(t, "#[")
	switch lang {
	case "python", "ruby":
		return hash
	case "":
		return slashes || star || hash
	case "style":
		return slashes
	default:
		return slashes || star
	}
}

// identWords splits every identifier of line into lower-cased words at
// underscores and case changes: "APIKey" → [api key], "is_admin" → [is admin].
func identWords(line string) [][]string {
	var out [][]string
	for _, id := range identRe.FindAllString(line, -1) {
		if ws := splitIdent(id); len(ws) > 0 {
			out = append(out, ws)
		}
	}
	return out
}

// splitIdent splits one identifier into lower-cased words.
func splitIdent(id string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(id)
	for i, r := range rs {
		switch {
		case r == '_' || r == '$':
			flush()
			continue
		case isUpper(r) && i > 0:
			prevLower := !isUpper(rs[i-1]) && rs[i-1] != '_' && rs[i-1] != '$'
			nextLower := i+1 < len(rs) && isLower(rs[i+1])
			if prevLower || (isUpper(rs[i-1]) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

func isUpper(r rune) bool { return r >= 'A' && r <= 'Z' }
func isLower(r rune) bool { return r >= 'a' && r <= 'z' }

// isProse reports documentation files, where words like "token" or "lock"
// are prose, not signals.
func isProse(path string) bool {
	base := strings.ToLower(filepath.Base(path))
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md", ".markdown", ".rst", ".adoc", ".txt", ".html", ".htm":
		return true
	}
	for _, p := range []string{"license", "licence", "changelog", "readme", "authors", "notice", "contributing"} {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return false
}
