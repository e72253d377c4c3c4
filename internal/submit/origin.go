package submit

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/credscope"
)

// Origin says who a request comes from, and so what its Repo, HeadRepo and
// DiffFile may name. Only the operator of this host may point a review at
// a directory or file on it: anyone else could name another review's
// cached clone (a private repository fetched with the fleet's token) and
// have it read and sent to the model.
type Origin int

const (
	// FromRemote, the zero value, is a request from anyone who is not the
	// operator: only remote URLs are accepted.
	FromRemote Origin = iota
	// FromManifest is a line of a bulk manifest.
	FromManifest
	// FromPullRequest is a pull request: a webhook delivery, a listing of
	// an organisation's pull requests or --pr, its clone URLs as the
	// forge reports them.
	FromPullRequest
	// FromOperator is the local command line (--repo DIR, --diff FILE) or a
	// dataset the operator reads from disk: Repo may also be a local
	// directory or a file:// URL, and DiffFile a file on this host.
	FromOperator
)

// String names the origin in messages ("… is not accepted from a manifest").
func (o Origin) String() string {
	switch o {
	case FromManifest:
		return "a manifest"
	case FromPullRequest:
		return "a pull request"
	case FromOperator:
		return "the command line"
	}
	return "a remote request"
}

// CheckOrigin refuses what req may not name given where it comes from: a
// local path, a file:// URL or a diff file from anyone but the operator,
// and a head repository that is not a remote URL from anyone at all (a
// fork is always remote). Plain http is accepted for a loopback host only,
// and only when allowLoopbackHTTP (snapshot.allow_loopback_http).
func CheckOrigin(req Request, allowLoopbackHTTP bool) error {
	if req.HeadRepo != "" {
		if err := CheckRemoteURL(req.HeadRepo, req.Origin, allowLoopbackHTTP); err != nil {
			return fmt.Errorf("head_repo: %w", err)
		}
	}
	if req.Origin == FromOperator {
		return nil
	}
	if req.DiffFile != "" {
		return fmt.Errorf("diff: a diff file on this host is not accepted from %s", req.Origin)
	}
	if err := CheckRemoteURL(req.Repo, req.Origin, allowLoopbackHTTP); err != nil {
		return fmt.Errorf("repo: %w", err)
	}
	return nil
}

// CheckRemoteURL accepts the remote repository addresses a request from
// origin may name: https://, ssh://, an scp-like user@host:path, and
// http:// to a loopback host when allowLoopbackHTTP. Everything else —
// a local path, file://, git://, a transport helper (ext::, fd::) — is
// refused, whatever the case of its scheme.
func CheckRemoteURL(raw string, origin Origin, allowLoopbackHTTP bool) error {
	if strings.TrimSpace(raw) == "" {
		return fmt.Errorf("empty; want a remote URL")
	}
	if strings.HasPrefix(raw, "-") || strings.ContainsAny(raw, "\x00\n\r") {
		return fmt.Errorf("%q is not a repository URL", StripCredentials(raw))
	}
	scheme, _, isURL := strings.Cut(raw, "://")
	if !isURL {
		// git reads user@host:path as ssh only when a colon comes before
		// any slash; "/tmp/a@b:c" and "./x:y" are local paths.
		hostPart, path, ok := strings.Cut(raw, ":")
		user, host, hasUser := strings.Cut(hostPart, "@")
		if ok && hasUser && user != "" && host != "" && path != "" &&
			!strings.ContainsAny(hostPart, "/\\") && !strings.HasPrefix(host, "-") {
			return nil
		}
		if ok && !strings.ContainsAny(hostPart, "/\\") && hostPart != "" && !strings.Contains(hostPart, "@") {
			return fmt.Errorf("%q: transport %q is not accepted from %s; use https or ssh", raw, hostPart, origin)
		}
		return fmt.Errorf("a local path is not accepted from %s; use a remote URL", origin)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a repository URL", StripCredentials(raw))
	}
	switch strings.ToLower(scheme) {
	case "https", "ssh":
	case "file":
		return fmt.Errorf("a file:// URL is not accepted from %s; use a remote URL", origin)
	case "http":
		if !credscope.IsLoopback(u.Hostname()) {
			return fmt.Errorf("plain http is not accepted from %s; use https", origin)
		}
		if !allowLoopbackHTTP {
			return fmt.Errorf("plain http to a loopback host is accepted only with snapshot.allow_loopback_http")
		}
	default:
		return fmt.Errorf("transport %q is not accepted from %s; use https or ssh", scheme, origin)
	}
	if u.Hostname() == "" || strings.HasPrefix(u.Hostname(), "-") {
		return fmt.Errorf("%q names no host", StripCredentials(raw))
	}
	return nil
}
