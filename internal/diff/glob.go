package diff

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Glob is a compiled path pattern in the syntax of .gitignore-style lists,
// matched by one engine (github.com/bmatcuk/doublestar/v4) wherever
// reviewfleet matches paths: ignore patterns, the expert's path_glob and the
// sandbox's deny list. Within a segment, *, ?, [a-z], {a,b} and \ escapes
// work as in doublestar; a "**" segment matches any number of directories,
// none included. A pattern without a slash matches a name at any depth
// ("*.md", "node_modules"); one with a slash is anchored at the repository
// root (a leading slash or "./" is allowed); a trailing slash means the
// directory ("docs/"). A path also matches when one of its directories
// does, so "vendor" ignores everything under vendor/, as in .gitignore.
type Glob struct {
	pattern string // the doublestar pattern, anchored at the root
}

// CompileGlob parses pattern.
func CompileGlob(pattern string) (Glob, error) {
	p := strings.TrimPrefix(strings.TrimSpace(pattern), "./")
	if p == "" || p == "/" || p == "." {
		return Glob{}, errors.New("empty glob pattern")
	}
	p = strings.TrimSuffix(p, "/")
	if !strings.Contains(p, "/") {
		p = "**/" + p
	}
	p = strings.TrimPrefix(p, "/")
	// Repeated ** segments mean what one does.
	for strings.Contains(p, "**/**") {
		p = strings.ReplaceAll(p, "**/**", "**")
	}
	if !doublestar.ValidatePattern(p) {
		return Glob{}, fmt.Errorf("glob %q is not a valid pattern", pattern)
	}
	return Glob{pattern: p}, nil
}

// Match reports whether the slash-separated relative path name, or one of
// its directories, matches.
func (g Glob) Match(name string) bool {
	if g.pattern == "" {
		return false
	}
	for p := name; p != "" && p != "."; {
		if ok, _ := doublestar.Match(g.pattern, p); ok {
			return true
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return false
}

// MayContain reports whether some path below the directory dir (relative,
// "." for the root) could match, so walks can skip whole subtrees.
func (g Glob) MayContain(dir string) bool {
	if dir == "." || dir == "" || strings.ContainsAny(g.pattern, `\[{`) {
		// Escapes, classes and braces may hold a "/", so the pattern cannot
		// be cut into segments: walk everything rather than prune wrongly.
		return true
	}
	p, d := strings.Split(g.pattern, "/"), strings.Split(dir, "/")
	for len(d) > 0 {
		if len(p) == 0 || strings.Contains(p[0], "**") {
			return true // an ancestor of dir matches, or any depth may
		}
		if ok, _ := doublestar.Match(p[0], d[0]); !ok {
			return false
		}
		p, d = p[1:], d[1:]
	}
	return true
}

// String returns the pattern as doublestar sees it.
func (g Glob) String() string { return g.pattern }

// MatchGlob reports whether the path name, or one of its directories,
// matches pattern (see Glob).
func MatchGlob(pattern, name string) (bool, error) {
	g, err := CompileGlob(pattern)
	if err != nil {
		return false, err
	}
	return g.Match(name), nil
}

// CheckGlob reports whether pattern is a valid Glob pattern.
func CheckGlob(pattern string) error {
	_, err := CompileGlob(pattern)
	return err
}
