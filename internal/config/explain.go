package config

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// extraEnv are REVIEWFLEET_ variables that are not configuration keys but
// are read by the command.
var extraEnv = map[string]bool{
	"REVIEWFLEET_CONFIG": true, "REVIEWFLEET_LOG_LEVEL": true, "REVIEWFLEET_GIT_TOKEN": true,
}

// EnvWarnings returns one warning per REVIEWFLEET_ variable in environ
// ("NAME=value" entries, as os.Environ gives) that sets nothing, naming the
// closest real variable: a misspelt variable used to be ignored in silence.
func EnvWarnings(environ []string) []string {
	known := map[string]bool{}
	var names []string
	for _, k := range Keys() {
		known[k.Env] = true
		names = append(names, k.Env)
	}
	for n := range extraEnv {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) || known[name] || extraEnv[name] ||
			strings.HasPrefix(name, EnvPrefix+"BENCH_") || strings.HasPrefix(name, EnvPrefix+"TEST_") || name == EnvPrefix+"BE_MAIN" {
			continue
		}
		w := fmt.Sprintf("%s is not a reviewfleet setting and is ignored", name)
		if best := closest(name, names); best != "" {
			w += "; did you mean " + best + "?"
		}
		out = append(out, w+" (`reviewfleet config keys` lists them)")
	}
	return out
}

// closest returns the candidate nearest to s by edit distance, or "" when
// none is near enough to be a plausible misspelling.
func closest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if d := editDistance(s, c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > max(2, len(s)/4) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

var (
	reCannot  = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")
	reUnknown = regexp.MustCompile(`^line (\d+): field (\S+) not found in type`)
)

// explainYAML rewrites the decoder's type errors for people: the key path
// of each bad value and the kind of value wanted ("harness.eval_timeout:
// want a duration like 30s or 5m, got \"abc\""), not Go type names.
func explainYAML(data []byte, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	paths := keyLines(data)
	var keys []string
	for _, k := range Keys() {
		keys = append(keys, k.Path)
	}
	msgs := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		if m := reCannot.FindStringSubmatch(e); m != nil {
			line, _ := strconv.Atoi(m[1])
			got := m[3]
			if got == "" {
				got = yamlKind(m[2])
			} else {
				got = strconv.Quote(got)
			}
			msgs = append(msgs, fmt.Sprintf("line %d: %s: want %s, got %s", line, orKey(paths[line]), humanType(m[4]), got))
			continue
		}
		if m := reUnknown.FindStringSubmatch(e); m != nil {
			line, _ := strconv.Atoi(m[1])
			p := cmpOr(paths[line], m[2])
			msg := fmt.Sprintf("line %d: unknown key %s", line, p)
			if best := closest(p, keys); best != "" {
				msg += "; did you mean " + best + "?"
			}
			msgs = append(msgs, msg)
			continue
		}
		msgs = append(msgs, e)
	}
	return errors.New(strings.Join(msgs, "\n  "))
}

func orKey(p string) string { return cmpOr(p, "value") }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// keyLines maps the line of each key in the document to its dotted path.
func keyLines(data []byte) map[int]string {
	out := map[int]string{}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return out
	}
	var walkNode func(n *yaml.Node, prefix string)
	walkNode = func(n *yaml.Node, prefix string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walkNode(c, prefix)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if prefix != "" {
					p = prefix + "." + k.Value
				}
				if _, ok := out[k.Line]; !ok {
					out[k.Line] = p
				}
				if v.Line != k.Line && v.Kind != yaml.MappingNode {
					if _, ok := out[v.Line]; !ok {
						out[v.Line] = p
					}
				}
				walkNode(v, p)
			}
		}
	}
	walkNode(&doc, "")
	return out
}

// humanType names the value a Go type wants.
func humanType(goType string) string {
	switch {
	case goType == "time.Duration":
		return "a duration like 30s or 5m"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "string":
		return "text"
	case strings.HasPrefix(goType, "[]"):
		return "a list, each item " + humanType(goType[2:])
	case strings.HasPrefix(goType, "map["):
		return "a section of name: value lines, each value " + humanType(goType[strings.IndexByte(goType, ']')+1:])
	}
	return "a section of keys"
}

// yamlKind names a YAML tag for people.
func yamlKind(tag string) string {
	switch tag {
	case "seq":
		return "a list"
	case "map":
		return "a section of keys"
	case "str":
		return "text"
	case "int", "float":
		return "a number"
	case "bool":
		return "true or false"
	case "null":
		return "nothing"
	}
	return tag
}
