// Package repoconfig reads the .reviewfleet.yaml files a repository
// carries at the reviewed revision and works out what they say for each
// changed file.
//
// A file applies to the paths under its directory. Files cascade from the
// root to the deepest directory:
//
//   - ignore: doublestar globs, relative to the file's directory; every
//     level adds to the list;
//   - instructions: text appended to the purpose of the change for files
//     under the directory; every level appends to the levels above;
//   - thresholds: confidence a finding of a risk type needs to be
//     reported; a deeper level overrides a risk type set above;
//   - disabled_risk_types: risk types not raised for files under the
//     directory; every level adds to the list.
//
// Decoding is strict: an unknown key, a wrong type, an unknown risk type, a
// threshold outside [0, 1] or an invalid glob makes the whole file invalid.
// An invalid file is reported as a review.ConfigWarning (with its line) and
// otherwise ignored: the review goes on as if it were absent.
package repoconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// FileName is the name of a repository configuration file.
const FileName = ".reviewfleet.yaml"

// MaxFileBytes bounds the size of one configuration file.
const MaxFileBytes = 64 << 10

// File is one .reviewfleet.yaml as written.
type File struct {
	Ignore            []string           `yaml:"ignore"`
	Instructions      string             `yaml:"instructions"`
	Thresholds        map[string]float64 `yaml:"thresholds"`
	DisabledRiskTypes []string           `yaml:"disabled_risk_types"`
}

// Config is the set of valid configuration files of a revision, by
// directory ("" is the root).
type Config struct {
	dirs map[string]File
}

// Paths lists the configuration files that may apply to the given paths:
// the one at the root and one in every directory above each path.
func Paths(paths []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		for d := path.Dir(p); ; d = path.Dir(d) {
			if d == "." || d == "/" {
				d = ""
			}
			if !seen[d] {
				seen[d] = true
				out = append(out, path.Join(d, FileName))
			}
			if d == "" {
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// Load parses the configuration files found (by path, as returned for
// Paths) into a Config, and reports the invalid ones.
func Load(files map[string][]byte) (*Config, []review.ConfigWarning) {
	c := &Config{dirs: map[string]File{}}
	var warns []review.ConfigWarning
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		f, ws := Parse(name, files[name])
		if len(ws) > 0 {
			warns = append(warns, ws...)
			continue
		}
		dir := path.Dir(name)
		if dir == "." {
			dir = ""
		}
		c.dirs[dir] = f
	}
	return c, warns
}

// Parse decodes and checks one configuration file. It returns warnings
// (with lines where known) when the file is invalid.
func Parse(name string, data []byte) (File, []review.ConfigWarning) {
	var f File
	if len(data) > MaxFileBytes {
		return f, []review.ConfigWarning{{File: name, Message: fmt.Sprintf("larger than %d bytes", MaxFileBytes)}}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return File{}, decodeWarnings(name, err)
	}
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root) // decoded above: it parses
	var warns []review.ConfigWarning
	bad := func(line int, format string, args ...any) {
		warns = append(warns, review.ConfigWarning{File: name, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	for i, g := range f.Ignore {
		if g == "" || !doublestar.ValidatePattern(g) {
			bad(lineOf(&root, "ignore", strconv.Itoa(i)), "ignore: invalid glob %q", g)
		}
	}
	for k, v := range f.Thresholds {
		if _, err := review.ParseRiskType(k); err != nil {
			bad(lineOf(&root, "thresholds", k), "thresholds: unknown risk type %q", k)
		} else if v < 0 || v > 1 || v != v {
			bad(lineOf(&root, "thresholds", k), "thresholds: %s must be between 0 and 1, not %v", k, v)
		}
	}
	for i, r := range f.DisabledRiskTypes {
		if _, err := review.ParseRiskType(r); err != nil {
			bad(lineOf(&root, "disabled_risk_types", strconv.Itoa(i)), "disabled_risk_types: unknown risk type %q", r)
		}
	}
	if len(warns) > 0 {
		sort.SliceStable(warns, func(i, j int) bool { return warns[i].Line < warns[j].Line })
		return File{}, warns
	}
	return f, nil
}

var (
	lineInMessage = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	unknownField  = regexp.MustCompile(`^field (\S+) not found in type \S+$`)
	wrongType     = regexp.MustCompile("^cannot unmarshal !!(\\w+) `(.*)` into (\\S+)$")
)

// kinds names the Go types of File's fields as a YAML writer knows them.
var kinds = map[string]string{
	"float64": "a number", "string": "text", "[]string": "a list of text",
	"map[string]float64": "a mapping of risk types to numbers", "repoconfig.File": "a mapping",
}

// plain rewrites a yaml.v3 message without Go type names.
func plain(msg string) string {
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("unknown key %q (known keys: ignore, instructions, thresholds, disabled_risk_types)", m[1])
	}
	if m := wrongType.FindStringSubmatch(msg); m != nil {
		want := kinds[m[3]]
		if want == "" {
			want = m[3]
		}
		return fmt.Sprintf("wants %s, not %q", want, m[2])
	}
	return msg
}

// decodeWarnings turns a yaml.v3 error into warnings with their lines.
func decodeWarnings(name string, err error) []review.ConfigWarning {
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	out := make([]review.ConfigWarning, 0, len(msgs))
	for _, m := range msgs {
		w := review.ConfigWarning{File: name, Message: strings.TrimPrefix(m, "yaml: ")}
		if sm := lineInMessage.FindStringSubmatch(m); sm != nil {
			w.Line, _ = strconv.Atoi(sm[1])
			w.Message = sm[2]
		}
		w.Message = plain(w.Message)
		out = append(out, w)
	}
	return out
}

// lineOf finds the line of a value by its path of mapping keys and
// sequence indexes (0 when not found).
func lineOf(n *yaml.Node, keys ...string) int {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, k := range keys {
		switch n.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					next = n.Content[i+1]
					if len(keys) == 1 || k == keys[len(keys)-1] {
						// A mapping entry is reported on its key's line.
						next = n.Content[i]
					}
					break
				}
			}
			if next == nil {
				return n.Line
			}
			n = next
		case yaml.SequenceNode:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(n.Content) {
				return n.Line
			}
			n = n.Content[i]
		default:
			return n.Line
		}
	}
	return n.Line
}
