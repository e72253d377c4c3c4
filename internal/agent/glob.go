package agent

import (
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/diff"
)

// maxGlobLen caps a path_glob.
const maxGlobLen = 256

// glob matches repository-relative, slash-separated paths with diff.Glob,
// the engine ignore patterns and the deny list use too: "**" matches any
// number of directories, a glob without a slash matches a name at any depth
// ("*.go" is every Go file), and a file also matches when one of its
// directories does, so "internal" and "internal/" both mean everything
// under internal.
type glob struct {
	g diff.Glob
}

// compileGlob parses a model-supplied path_glob; empty means every file.
func compileGlob(g string) (*glob, error) {
	g = strings.TrimSpace(g)
	if len(g) > maxGlobLen {
		return nil, toolErrorf("path_glob is longer than %d characters", maxGlobLen)
	}
	g = strings.TrimPrefix(g, "./")
	if g == "" || g == "." {
		g = "**"
	}
	if strings.HasPrefix(g, "/") {
		return nil, refusedf("path_glob must be relative to the repository root")
	}
	for _, s := range strings.Split(g, "/") {
		if s == ".." {
			return nil, refusedf("path_glob must not contain ..")
		}
	}
	c, err := diff.CompileGlob(g)
	if err != nil {
		return nil, toolErrorf("path_glob %q is not a valid pattern", g)
	}
	return &glob{g: c}, nil
}

// match reports whether the file path rel, or one of its directories,
// matches.
func (g *glob) match(rel string) bool { return g.g.Match(rel) }

// mayContain reports whether some file below the directory dir (relative,
// "." for the root) could match, so walks can skip whole subtrees.
func (g *glob) mayContain(dir string) bool { return g.g.MayContain(dir) }
