package prompts

import (
	"path/filepath"
	"regexp"
	"strings"
)

// nonSourceFiles lists the files that hold no program code, keyed by
// lower-cased extension (".md") or by lower-cased base name ("go.mod",
// "dockerfile"). A change to one of them gets the core intent prompt alone.
// Every file not listed is read as source, so that an unknown kind of file
// keeps the conservative all-packs default.
var nonSourceFiles = map[string]bool{
	// Documentation and plain text.
	".md": true, ".markdown": true, ".rst": true, ".adoc": true, ".asciidoc": true, ".txt": true,
	"license": true, "licence": true, "notice": true, "authors": true, "contributors": true,
	"codeowners": true, "changelog": true, "readme": true, "copying": true, "patents": true,
	// Data and configuration.
	".json": true, ".yml": true, ".yaml": true, ".toml": true, ".ini": true, ".cfg": true,
	".conf": true, ".properties": true, ".csv": true, ".tsv": true,
	// Dependency manifests and checksums.
	"go.mod": true, "go.sum": true, "go.work": true, "go.work.sum": true, ".lock": true, ".sum": true,
	// Build and repository housekeeping.
	"dockerfile": true, "containerfile": true, ".dockerfile": true, "makefile": true, "gnumakefile": true,
	".mk": true, ".dockerignore": true, ".gitignore": true, ".gitattributes": true, ".gitmodules": true,
	".editorconfig": true, ".mailmap": true, ".npmignore": true,
}

// isSourceFile reports whether path may hold program code: whether neither
// its base name nor its extension is in nonSourceFiles.
func isSourceFile(path string) bool {
	base := strings.ToLower(filepath.Base(path))
	return !nonSourceFiles[base] && !nonSourceFiles[filepath.Ext(base)]
}

// lineClass is what a changed line carries.
type lineClass int

const (
	lineCode    lineClass = iota // anything not recognised below
	lineComment                  // blank, or only a comment or a docstring
	lineDecl                     // a package, import, include or require line
)

// declRule recognises one kind of declaration line of a language. When
// list is set, the line opens a multi-line import list that list reads.
type declRule struct {
	re   *regexp.Regexp
	list *importList
}

// importList reads the lines of a multi-line import list: items until the
// closing line. With bootstrap, an item seen before any other line of a
// hunk side is taken to be inside a list whose opening lies before the hunk.
type importList struct {
	item, close *regexp.Regexp
	bootstrap   bool
}

var (
	goImportList = &importList{
		item:      regexp.MustCompile(`^(\w+\s+|\.\s+)?"[^"]*"\s*(//.*)?$`),
		close:     regexp.MustCompile(`^\)\s*(//.*)?$`),
		bootstrap: true,
	}
	pythonImportList = &importList{
		item:  regexp.MustCompile(`^(\w+(\s+as\s+\w+)?\s*,\s*)*\w+(\s+as\s+\w+)?\s*,?\s*(#.*)?$`),
		close: regexp.MustCompile(`^(\w+(\s+as\s+\w+)?\s*,\s*)*(\w+(\s+as\s+\w+)?\s*,?\s*)?\)\s*(#.*)?$`),
	}
	jsImportList = &importList{
		item:  regexp.MustCompile(`^((type\s+)?[\w$]+(\s+as\s+[\w$]+)?\s*,\s*)*(type\s+)?[\w$]+(\s+as\s+[\w$]+)?\s*,?$`),
		close: regexp.MustCompile(`^\}\s*from\s*['"][^'"]+['"]\s*;?$`),
	}
	rustUseList = &importList{
		item:  regexp.MustCompile(`^[\w:*{},\s]+$`),
		close: regexp.MustCompile(`^[\w:*{},\s]*\};$`),
	}
)

// decl builds a rule; the pattern is matched against the trimmed line.
func decl(expr string) declRule { return declRule{re: regexp.MustCompile(expr)} }

// declList builds a rule whose line opens a multi-line import list.
func declList(expr string, list *importList) declRule {
	return declRule{re: regexp.MustCompile(expr), list: list}
}

// jvmDecls serves Java, Kotlin and Scala.
var jvmDecls = []declRule{
	decl(`^package\s+[\w.]+\s*;?$`),
	decl(`^import\s+(static\s+)?[\w.]+(\.\*|\._|\.\{[\w\s,=>]*\})?(\s+as\s+\w+)?\s*;?$`),
}

// declRules holds, per language (see languageByExt), the lines that only
// name the file's package or bring in other code. Languages without rules
// (and unknown ones) treat every non-comment line as code.
var declRules = map[string][]declRule{
	"go": {
		decl(`^package\s+\w+\s*(//.*)?$`),
		decl(`^import\s+(\w+\s+|\.\s+)?"[^"]*"\s*(//.*)?$`),
		declList(`^import\s*\(\s*(//.*)?$`, goImportList),
	},
	"python": {
		decl(`^import\s+[\w.]+(\s+as\s+\w+)?(\s*,\s*[\w.]+(\s+as\s+\w+)?)*\s*(#.*)?$`),
		decl(`^from\s+[\w.]+\s+import\s+(\*|\w+(\s+as\s+\w+)?(\s*,\s*\w+(\s+as\s+\w+)?)*|\((\s*\w+(\s+as\s+\w+)?\s*,?)*\))\s*(#.*)?$`),
		declList(`^from\s+[\w.]+\s+import\s*\(\s*(\w+(\s+as\s+\w+)?\s*,\s*)*(#.*)?$`, pythonImportList),
	},
	"js": {
		decl(`^import\s+[^;()]*\bfrom\s*['"][^'"]+['"]\s*;?$`),
		decl(`^import\s+['"][^'"]+['"]\s*;?$`),
		decl(`^export\s+(type\s+)?(\*|\*\s+as\s+[\w$]+|\{[^}]*\})\s+from\s*['"][^'"]+['"]\s*;?$`),
		decl(`^(const|let|var)\s+([\w$]+|\{[\w$\s,:]*\})\s*=\s*require\(\s*['"][^'"]+['"]\s*\)\s*;?$`),
		decl(`^import\s+[\w$]+\s*=\s*require\(\s*['"][^'"]+['"]\s*\)\s*;?$`),
		declList(`^import\s+(type\s+)?([\w$]+\s*,\s*)?\{[^}]*$`, jsImportList),
	},
	"java":   jvmDecls,
	"kotlin": jvmDecls,
	"scala":  jvmDecls,
	"csharp": {
		decl(`^(global\s+)?using\s+(static\s+)?[\w.]+\s*;$`),
		decl(`^(global\s+)?using\s+\w+\s*=\s*[\w.<>, ]+;$`),
		decl(`^namespace\s+[\w.]+\s*;$`),
	},
	"swift": {
		decl(`^(@testable\s+)?import\s+((class|struct|func|enum|protocol|typealias|let|var)\s+)?[\w.]+$`),
	},
	"rust": {
		decl(`^(pub(\([\w:\s]+\))?\s+)?use\s+[\w:*{},\s]+;$`),
		decl(`^extern\s+crate\s+\w+(\s+as\s+\w+)?\s*;$`),
		decl(`^(pub(\([\w:\s]+\))?\s+)?mod\s+\w+\s*;$`),
		declList(`^(pub(\([\w:\s]+\))?\s+)?use\s+[\w:]+::\{[\w:*{},\s]*$`, rustUseList),
	},
	"ruby": {
		decl(`^require(_relative)?\s*\(?\s*['"][^'"]+['"]\s*\)?$`),
	},
	"php": {
		decl(`^<\?php$`),
		decl(`^namespace\s+[\w\\]+\s*;$`),
		decl(`^(require|require_once|include|include_once)\s*\(?\s*['"][^'"]+['"]\s*\)?\s*;$`),
	},
	"c": {
		decl(`^#\s*(include|include_next|import)\s*[<"][^>"]+[>"]\s*(//.*|/\*.*\*/)?$`),
		decl(`^#\s*pragma\s+once$`),
	},
	"style": {
		decl(`^@(import|use|forward|charset)\s+[^;{}]+;$`),
	},
}

// phpUseRe matches a PHP namespace import. It is checked against the raw
// line: an indented "use" inside a class body mixes in a trait, which is code.
var phpUseRe = regexp.MustCompile(`^use\s+(function\s+|const\s+)?\\?[\w\\]+(\s+as\s+\w+)?(\\\{[^}]*\})?\s*;\s*$`)

// pythonDefRe matches the last line of a def or class header, after which
// a string literal is a docstring.
var pythonDefRe = regexp.MustCompile(`^((async\s+)?def|class)\s.*:\s*(#.*)?$|^\)\s*(->.*)?:\s*(#.*)?$`)

// pythonDocstringRe matches a line that opens a docstring.
var pythonDocstringRe = regexp.MustCompile(`^[rRuU]?("""|''')`)

// scanner classifies the lines of one side of a hunk (context and removed
// lines, or context and added lines) in order, following block comments,
// docstrings and multi-line import lists across lines. It sees only the
// hunk, so when a hunk starts inside such a construct it reads the lines as
// code, the conservative side, with one exception: a line that starts by
// closing a block comment none of the side's lines opened shows that the
// lines before it were comment (see headComment).
type scanner struct {
	lang    string
	closeBy string      // delimiter that ends the open block comment or docstring
	list    *importList // the open multi-line import list
	docOK   bool        // Python: the next statement may be a docstring
	started bool        // a line other than blank or comment has been seen
	opened  bool        // a block comment was opened on this side
	n       int         // lines read
	// headComment is the number of lines at the start of the side that
	// lie inside a block comment opened before the hunk; 0 when none.
	headComment int
}

// newScanner starts a side of a hunk; atTop says the side starts at the
// file's first line, where a Python module docstring may stand.
func newScanner(lang string, atTop bool) *scanner {
	return &scanner{lang: lang, docOK: atTop}
}

// line classifies the side's next line and returns its class and its
// index on the side.
func (s *scanner) line(text string) (lineClass, int) {
	s.n++
	return s.next(text), s.n - 1
}

// next classifies one line of the side and advances the state.
func (s *scanner) next(line string) lineClass {
	t := strings.TrimSpace(line)
	if s.closeBy != "" {
		i := strings.Index(t, s.closeBy)
		if i < 0 {
			return lineComment
		}
		rest := t[i+len(s.closeBy):]
		s.closeBy = ""
		return s.next(rest)
	}
	if t == "" {
		return lineComment
	}
	if s.list != nil {
		switch {
		case s.list.close.MatchString(t):
			s.list = nil
			return lineDecl
		case s.list.item.MatchString(t):
			return lineDecl
		case isComment(s.lang, t):
			return lineComment
		}
		s.list = nil // the list ended on a line of an unknown form
	}
	if strings.HasPrefix(t, "/*") && blockCommentLangs[s.lang] {
		s.opened = true
		end := strings.Index(t[2:], "*/")
		if end < 0 {
			s.closeBy = "*/"
			return lineComment
		}
		return s.next(t[2+end+2:])
	}
	if strings.HasPrefix(t, "*/") && blockCommentLangs[s.lang] && !s.opened && s.headComment == 0 {
		s.headComment = s.n - 1
		s.started = false
		return s.next(t[2:])
	}
	if isComment(s.lang, t) {
		return lineComment
	}
	if s.lang == "python" && s.docOK {
		if m := pythonDocstringRe.FindStringSubmatch(t); m != nil {
			s.docOK = false
			if !strings.Contains(t[len(m[0]):], m[1]) {
				s.closeBy = m[1]
			}
			return lineComment
		}
	}
	first := !s.started
	s.started = true
	s.docOK = s.lang == "python" && pythonDefRe.MatchString(t)
	for _, r := range declRules[s.lang] {
		if r.re.MatchString(t) {
			s.list = r.list
			return lineDecl
		}
	}
	if s.lang == "php" && phpUseRe.MatchString(line) {
		return lineDecl
	}
	if s.lang == "go" && first && goImportList.item.MatchString(t) {
		s.list = goImportList
		return lineDecl
	}
	return lineCode
}

// blockCommentLangs are the languages whose block comments the scanner
// follows across lines. In other languages, unknown ones included, a line
// starting with "/*" may be code (a shell glob), so only that line counts.
var blockCommentLangs = map[string]bool{
	"go": true, "js": true, "java": true, "kotlin": true, "scala": true, "csharp": true,
	"swift": true, "rust": true, "php": true, "c": true, "style": true,
}
