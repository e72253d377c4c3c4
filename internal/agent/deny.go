package agent

import (
	"path"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/diff"
)

// DefaultDeny lists the paths the expert's tools never read, list or
// search when Config.Deny is empty: environment files, private keys and
// credential stores. Patterns use diff.MatchGlob syntax: one without a
// slash matches a name at any depth, a trailing slash everything under a
// directory.
var DefaultDeny = []string{
	".env*", "*.pem", "*.key", "*.p12", "*.pfx", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	".npmrc", ".netrc", "_netrc", ".pypirc", ".git-credentials", "credentials*", ".dockercfg", ".docker/config.json",
}

// alwaysDenied holds what no configuration can expose: version control
// metadata, whose config may hold a remote URL with a token in it.
var alwaysDenied = []string{".git/"}

// msgDenied ends the tool error of a path the policy refuses.
const msgDenied = "denied by sandbox policy"

// denyList decides which repository paths the sandbox refuses. A pattern
// without an inner slash ("*.pem", ".git/") denies every path with a
// segment it matches, which is what diff.MatchGlob gives for the path and
// its directories; only the others (".docker/config.json") need MatchGlob.
type denyList struct {
	names    []string // unanchored patterns, trailing slash removed
	anchored []string // patterns with an inner slash
}

// newDenyList returns the policy: .git always, then globs, or DefaultDeny
// when globs is empty.
func newDenyList(globs []string) denyList {
	if len(globs) == 0 {
		globs = DefaultDeny
	}
	var d denyList
	for _, g := range append(append([]string{}, alwaysDenied...), globs...) {
		if trimmed := strings.TrimSuffix(g, "/"); !strings.Contains(trimmed, "/") {
			d.names = append(d.names, trimmed)
		} else {
			d.anchored = append(d.anchored, g)
		}
	}
	return d
}

// denied reports whether the slash-separated relative path rel, or one of
// the directories on the way to it, matches the policy.
func (d denyList) denied(rel string) bool {
	if rel == "." || rel == "" {
		return false
	}
	rest := rel
	for rest != "" {
		seg, tail, _ := strings.Cut(rest, "/")
		for _, n := range d.names {
			if ok, _ := path.Match(n, seg); ok {
				return true
			}
		}
		rest = tail
	}
	if len(d.anchored) == 0 {
		return false
	}
	segs := strings.Split(rel, "/")
	for i := 1; i <= len(segs); i++ {
		p := strings.Join(segs[:i], "/")
		for _, g := range d.anchored {
			if ok, _ := diff.MatchGlob(g, p); ok {
				return true
			}
		}
	}
	return false
}

// Denied reports whether the expert's tools refuse the repository path rel
// (slash-separated, relative) under the deny globs (DefaultDeny when empty),
// so that snapshots can leave such files out.
func Denied(globs []string, rel string) bool { return newDenyList(globs).denied(rel) }
