package agent

import "github.com/reviewfleet/reviewfleet/internal/diff"

// DefaultDeny lists the paths the expert's tools never read, list or
// search when Config.Deny is empty: environment files, private keys and
// credential stores. Patterns use diff.Glob syntax: one without a
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

// denyList decides which repository paths the sandbox refuses, with the
// glob engine of ignore patterns and path_glob (diff.Glob): a path is
// refused when it or one of its directories matches.
type denyList struct {
	globs []diff.Glob
}

// newDenyList returns the policy: .git always, then globs, or DefaultDeny
// when globs is empty. A malformed glob (configuration validation rejects
// them) denies nothing.
func newDenyList(globs []string) denyList {
	if len(globs) == 0 {
		globs = DefaultDeny
	}
	var d denyList
	for _, g := range append(append([]string{}, alwaysDenied...), globs...) {
		if c, err := diff.CompileGlob(g); err == nil {
			d.globs = append(d.globs, c)
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
	for _, g := range d.globs {
		if g.Match(rel) {
			return true
		}
	}
	return false
}

// Denied reports whether the expert's tools refuse the repository path rel
// (slash-separated, relative) under the deny globs (DefaultDeny when empty),
// so that snapshots can leave such files out.
func Denied(globs []string, rel string) bool { return newDenyList(globs).denied(rel) }
