package agent

import (
	"path"
	"strings"
)

// maxGlobLen caps a path_glob.
const maxGlobLen = 256

// glob matches repository-relative, slash-separated paths. Segments use
// path.Match syntax; a "**" segment matches any number of directories,
// including none. A glob without a slash matches a name at any depth ("*.go"
// is every Go file). A file also matches when one of its directories does,
// so "internal" and "internal/" both mean everything under internal.
type glob struct {
	segs []string
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
		return nil, toolErrorf("path_glob must be relative to the repository root")
	}
	if !strings.Contains(g, "/") && g != "**" {
		g = "**/" + g
	}
	if strings.HasSuffix(g, "/") {
		g += "**"
	}
	var segs []string
	for _, s := range strings.Split(g, "/") {
		switch s {
		case "", ".":
			continue
		case "..":
			return nil, toolErrorf("path_glob must not contain ..")
		case "**":
			if len(segs) > 0 && segs[len(segs)-1] == "**" {
				continue
			}
		default:
			if strings.Contains(s, "**") {
				return nil, toolErrorf("path_glob segment %q: ** must be a whole segment", s)
			}
			if _, err := path.Match(s, ""); err != nil {
				return nil, toolErrorf("path_glob segment %q is not a valid pattern", s)
			}
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		segs = []string{"**"}
	}
	return &glob{segs: segs}, nil
}

// match reports whether the file path rel, or one of its directories,
// matches.
func (g *glob) match(rel string) bool {
	s := strings.Split(rel, "/")
	for i := len(s); i > 0; i-- {
		if matchSegs(g.segs, s[:i]) {
			return true
		}
	}
	return false
}

// mayContain reports whether some file below the directory dir (relative,
// "." for the root) could match, so walks can skip whole subtrees.
func (g *glob) mayContain(dir string) bool {
	if dir == "." || dir == "" {
		return true
	}
	p, d := g.segs, strings.Split(dir, "/")
	for len(d) > 0 {
		if len(p) == 0 {
			return true // an ancestor of dir matches: everything below does
		}
		if p[0] == "**" {
			return true
		}
		if ok, _ := path.Match(p[0], d[0]); !ok {
			return false
		}
		p, d = p[1:], d[1:]
	}
	return true
}

// matchSegs reports whether the pattern segments p match the path
// segments s. It fills a table of suffix matches, so globs with many **
// segments cost O(len(p)·len(s)) instead of exponential backtracking.
func matchSegs(p, s []string) bool {
	// m[i][j]: p[i:] matches s[j:].
	m := make([][]bool, len(p)+1)
	for i := range m {
		m[i] = make([]bool, len(s)+1)
	}
	m[len(p)][len(s)] = true
	for i := len(p) - 1; i >= 0; i-- {
		for j := len(s); j >= 0; j-- {
			if p[i] == "**" {
				m[i][j] = m[i+1][j] || (j < len(s) && m[i][j+1])
				continue
			}
			if j < len(s) {
				ok, _ := path.Match(p[i], s[j])
				m[i][j] = ok && m[i+1][j+1]
			}
		}
	}
	return m[0][0]
}
