package agent

import (
	"context"
	"path"
	"regexp"
	"strings"
)

type findSymbolArgs struct {
	Name string `json:"name"`
}

// symbolName is what find_symbol accepts: an identifier, optionally ending
// in ? or ! (Ruby).
var symbolName = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*[?!]?$`)

// maxSymbolLen caps a find_symbol name.
const maxSymbolLen = 128

// symbolLang maps file extensions to the definition rules that apply.
var symbolLang = map[string]string{
	".go": "go",
	".py": "python", ".pyi": "python",
	".js": "js", ".jsx": "js", ".mjs": "js", ".cjs": "js",
	".ts": "js", ".tsx": "js", ".mts": "js", ".cts": "js",
	".java": "java",
	".kt":   "kotlin", ".kts": "kotlin",
	".rb": "ruby",
}

// javaNotTypes are words that can stand where a Java method's return type
// stands in a statement that is not a declaration.
var javaNotTypes = map[string]bool{
	"return": true, "new": true, "throw": true, "else": true, "case": true,
	"yield": true, "await": true, "assert": true, "package": true, "import": true,
}

// definitionRules returns the line patterns that declare name in lang. The
// patterns of a language are only line heuristics: they find definitions in
// conventionally formatted code, not every possible one.
func definitionRules(lang, name string) []*regexp.Regexp {
	n := regexp.QuoteMeta(name)
	end := `(?:[^A-Za-z0-9_$?!]|$)`
	var src []string
	switch lang {
	case "go":
		src = []string{
			`^\s*func\s+(?:\([^)]*\)\s*)?` + n + `\s*[\[(]`,
			`^\s*type\s+` + n + end,
			`^\s*(?:var|const)\s+(?:\w+\s*,\s*)*` + n + end,
		}
	case "python":
		src = []string{
			`^\s*(?:async\s+)?def\s+` + n + `\s*\(`,
			`^\s*class\s+` + n + `\s*[(:]`,
		}
	case "js":
		src = []string{
			`^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?function\s*\*?\s*` + n + `\s*[<(]`,
			`^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?class\s+` + n + end,
			`^\s*(?:export\s+)?(?:declare\s+)?(?:const|let|var)\s+` + n + `\s*[=:]`,
			`^\s*(?:export\s+)?(?:declare\s+)?(?:interface|type|enum)\s+` + n + end,
			`^\s*(?:(?:public|private|protected|static|readonly|async|get|set|override)\s+)*\*?` + n + `\s*(?:<[^>]*>)?\([^)]*\)\s*(?::[^={]+)?\{\s*$`,
			`^\s*(?:(?:public|private|protected|static|readonly)\s+)*` + n + `\s*=\s*(?:async\s+)?(?:\([^)]*\)|\w+)\s*=>`,
		}
	case "java", "kotlin":
		src = []string{
			`^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|protected|internal|abstract|final|static|sealed|open|data|enum|inner|annotation|value|strictfp)\s+)*(?:class|interface|enum|object|record|@interface)\s+` + n + end,
		}
		if lang == "kotlin" {
			src = append(src,
				`^\s*(?:(?:public|private|protected|internal|abstract|final|open|override|suspend|inline|operator|infix|tailrec|external|actual|expect)\s+)*fun\s+(?:<[^>]*>\s*)?(?:[\w.<>?]+\.)?`+n+`\s*\(`,
				`^\s*(?:(?:public|private|protected|internal|override|const|lateinit|open)\s+)*(?:val|var)\s+`+n+end,
			)
		} else {
			src = append(src,
				`^\s*(?:(?:public|private|protected|static|final|abstract|synchronized|native|default|strictfp)\s+)*(?:<[^>]*>\s+)?([\w.$\[\]]+(?:<[^>]*>)?(?:\[\])*)\s+`+n+`\s*\(`,
			)
		}
	case "ruby":
		src = []string{
			`^\s*def\s+(?:self\.)?` + n + end,
			`^\s*(?:class|module)\s+(?:[A-Z]\w*::)*` + n + end,
		}
	}
	res := make([]*regexp.Regexp, len(src))
	for i, s := range src {
		res[i] = regexp.MustCompile(s)
	}
	return res
}

// isDefinition reports whether line declares name under the rules.
func isDefinition(lang string, rules []*regexp.Regexp, line string) bool {
	for _, re := range rules {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if lang == "java" && len(m) > 1 && javaNotTypes[m[1]] {
			continue
		}
		return true
	}
	return false
}

// goBlockOpen starts a grouped Go declaration.
var goBlockOpen = regexp.MustCompile(`^\s*(?:var|const|type)\s*\(\s*$`)

// goBlockEntry matches a line of a grouped Go declaration that declares
// name.
func goBlockEntry(name string) *regexp.Regexp {
	return regexp.MustCompile(`^\s*(?:\w+\s*,\s*)*` + regexp.QuoteMeta(name) + `(?:[^A-Za-z0-9_]|$)`)
}

// goBlockDefs returns the 0-based indexes of lines declaring what entry
// matches inside grouped Go declarations: var ( … ), const ( … ) and
// type ( … ).
func goBlockDefs(lines []string, entry *regexp.Regexp) []int {
	var out []int
	inBlock, depth := false, 0
	for i, l := range lines {
		if !inBlock {
			if goBlockOpen.MatchString(l) {
				inBlock, depth = true, 0
			}
			continue
		}
		if depth == 0 {
			if strings.HasPrefix(strings.TrimSpace(l), ")") {
				inBlock = false
				continue
			}
			if entry.MatchString(l) {
				out = append(out, i)
			}
		}
		depth += strings.Count(l, "{") + strings.Count(l, "(") - strings.Count(l, "}") - strings.Count(l, ")")
		if depth < 0 {
			depth = 0
		}
	}
	return out
}

// findSymbolTool serves find_symbol: definitions of a name in Go, Python,
// JavaScript/TypeScript, Java/Kotlin and Ruby files. A qualified name
// (Type.method, Mod::Class) is looked up by its last part.
func findSymbolTool(ctx context.Context, sb *sandbox, ignore func(string) bool, a findSymbolArgs) (toolResult, error) {
	name := strings.TrimSpace(a.Name)
	if i := strings.LastIndexAny(name, ".:"); i >= 0 {
		name = name[i+1:]
	}
	if name == "" {
		return toolResult{}, toolErrorf("find_symbol needs a name")
	}
	if len(name) > maxSymbolLen || !symbolName.MatchString(name) {
		return toolResult{}, toolErrorf("find_symbol needs an identifier such as parseConfig or User.save")
	}
	rules := map[string][]*regexp.Regexp{}
	goEntry := goBlockEntry(name)
	all, _ := compileGlob("")
	var hits hitList
	err := walkText(ctx, sb, all, ignore, func(rel string, lines []string) bool {
		lang, ok := symbolLang[strings.ToLower(path.Ext(rel))]
		if !ok {
			return true
		}
		if rules[lang] == nil {
			rules[lang] = definitionRules(lang, name)
		}
		found := map[int]bool{}
		if lang == "go" {
			for _, i := range goBlockDefs(lines, goEntry) {
				found[i] = true
			}
		}
		for i, l := range lines {
			if found[i] || isDefinition(lang, rules[lang], l) {
				if !hits.add(rel, i+1, l) {
					return false
				}
			}
		}
		return true
	})
	if err != nil {
		return toolResult{}, err
	}
	return hits.render("definitions"), nil
}
