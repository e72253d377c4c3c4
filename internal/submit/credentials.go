package submit

import (
	"net/url"
	"strings"
)

// StripCredentials removes a user name, password or token from a
// repository URL (https://user:token@host/x → https://host/x) so it can
// be stored and shown. Paths and scp-like addresses (git@host:x) pass
// unchanged: their user is not a secret.
func StripCredentials(repo string) string {
	if !strings.Contains(repo, "://") {
		return repo
	}
	u, err := url.Parse(repo)
	if err != nil {
		// Unparseable: drop everything up to the last @ of the authority.
		scheme, rest, _ := strings.Cut(repo, "://")
		host, path, _ := strings.Cut(rest, "/")
		if i := strings.LastIndex(host, "@"); i >= 0 {
			host = host[i+1:]
		}
		return scheme + "://" + host + "/" + path
	}
	u.User = nil
	u.RawQuery, u.ForceQuery, u.Fragment = "", false, "" // tokens passed as ?access_token=…
	return u.String()
}
