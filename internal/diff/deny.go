package diff

import "strings"

// ReasonDenied: the path is one no stage may read — an environment file,
// a private key, a credential store (DefaultDeny, or the configured
// list). The file is listed as not reviewed; its content and diff are
// neither stored nor sent to a model.
const ReasonDenied = "denied"

// DefaultDeny lists the paths whose contents no stage reads — not the
// intent, verify or expert stages, not the expert's tools — when no deny
// list is configured: environment files, private keys and credential
// stores. Patterns use Glob syntax: one without a slash matches a name at
// any depth, a trailing slash everything under a directory. They match
// case-insensitively (.ENV, SERVER.KEY), as the file systems of macOS and
// Windows check out such names as the same file.
var DefaultDeny = []string{
	".env", ".env.*", "*.env", ".envrc",
	"*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	".npmrc", ".yarnrc.yml", ".netrc", "_netrc", ".pypirc", ".pgpass", ".my.cnf", ".git-credentials", ".gitcookies",
	"credentials", "credentials.json", "credentials.y*ml", "credentials.xml", "credentials.ini", "credentials.toml", "credentials.csv", ".credentials*", ".dockercfg", ".docker/config.json",
	"kubeconfig", "*.kubeconfig", ".kube/config", ".htpasswd", "htpasswd", ".vault-token",
	"*.tfstate", "*.tfstate.backup",
}

// alwaysDenied holds what no configuration can expose: version control
// metadata, whose config may hold a remote URL with a token in it.
var alwaysDenied = []string{".git/"}

// DenyList decides which repository paths no stage may read: a path is
// denied when it or one of its directories matches, ignoring case.
type DenyList struct {
	globs []Glob
}

// NewDenyList returns the policy: .git always, then globs, or DefaultDeny
// when globs is empty. A malformed glob (configuration validation rejects
// them) denies nothing. Patterns are lower-cased, like the paths they are
// matched against.
func NewDenyList(globs []string) DenyList {
	if len(globs) == 0 {
		globs = DefaultDeny
	}
	var d DenyList
	for _, g := range append(append([]string{}, alwaysDenied...), globs...) {
		if c, err := CompileGlob(strings.ToLower(g)); err == nil {
			d.globs = append(d.globs, c)
		}
	}
	return d
}

// Denied reports whether the slash-separated relative path rel, or one of
// the directories on the way to it, matches the policy.
func (d DenyList) Denied(rel string) bool {
	if rel == "." || rel == "" {
		return false
	}
	rel = strings.ToLower(rel)
	for _, g := range d.globs {
		if g.Match(rel) {
			return true
		}
	}
	return false
}

// Globs returns the compiled patterns, .git first.
func (d DenyList) Globs() []Glob { return d.globs }

// Denied reports whether rel is denied under globs (DefaultDeny when
// empty). It is the one rule the expert's sandbox and the submission
// share: a file the expert may not open is not sent to any stage either.
func Denied(globs []string, rel string) bool { return NewDenyList(globs).Denied(rel) }
