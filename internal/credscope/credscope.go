// Package credscope binds credentials to the hosts they belong to. A Scope
// is a URL prefix (scheme, host, port and an optional path prefix); a
// credential configured for it is sent to a URL only when the URL falls
// under it, compared exactly: a different scheme, host, port, a host that
// merely starts or ends like the scope's, user information in the URL, a
// percent-encoded or non-ASCII host, a trailing dot, or a path that only
// shares leading characters with the scope's all count as another host.
//
// Credentials travel over https. Plain http is accepted only for a loopback
// host (127.0.0.0/8, ::1, localhost) named explicitly with http:// in the
// configuration: a local test double or a proxy on the same machine.
package credscope

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Scope is a URL prefix a credential may be sent to.
type Scope struct {
	scheme string // "https", or "http" for a loopback host
	host   string // lower case, without a port
	port   string // always explicit
	path   string // "" or "/seg/…" without a trailing slash
}

// Parse reads a scope: "https://HOST[:PORT][/PATH]", or a bare
// "HOST[:PORT][/PATH]" meaning https. http:// is accepted for a loopback
// host only.
func Parse(s string) (Scope, error) {
	raw := strings.TrimSpace(s)
	if raw == "" {
		return Scope{}, errors.New("empty credential scope")
	}
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, ok := parseStrict(raw)
	if !ok {
		return Scope{}, fmt.Errorf("credential scope %q: want https://HOST[:PORT][/PATH] with no user, query or fragment", s)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return Scope{}, fmt.Errorf("credential scope %q: no query or fragment allowed", s)
	}
	sc := Scope{scheme: u.Scheme, host: strings.ToLower(u.Hostname()), port: portOf(u)}
	switch {
	case sc.scheme == "https":
	case sc.scheme == "http" && IsLoopback(sc.host):
	case sc.scheme == "http":
		return Scope{}, fmt.Errorf("credential scope %q: credentials go over https; http is allowed for a loopback host only", s)
	default:
		return Scope{}, fmt.Errorf("credential scope %q: scheme %q is not https", s, sc.scheme)
	}
	p := strings.TrimRight(u.Path, "/")
	if !cleanPath(p) {
		return Scope{}, fmt.Errorf("credential scope %q: path has empty, '.' or '..' segments", s)
	}
	sc.path = p
	return sc, nil
}

// MustParse is Parse for scopes written in code.
func MustParse(s string) Scope {
	sc, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return sc
}

// String is the scope as a URL prefix.
func (s Scope) String() string {
	return s.scheme + "://" + net.JoinHostPort(s.host, s.port) + s.path + "/"
}

// Origin is the scope without its path: the same scheme, host and port.
func (s Scope) Origin() Scope { s.path = ""; return s }

// Matches reports whether a credential for s may be sent to u.
func (s Scope) Matches(u *url.URL) bool {
	if u == nil || s.scheme == "" || u.User != nil || u.Opaque != "" {
		return false
	}
	if strings.ToLower(u.Scheme) != s.scheme {
		return false
	}
	host := u.Hostname()
	if !validHost(host) || strings.ToLower(host) != s.host || portOf(u) != s.port {
		return false
	}
	if s.path == "" {
		return true
	}
	// The path is compared as sent: an escaped byte could decode to a
	// separator or a dot segment on the other side.
	p := u.EscapedPath()
	if strings.Contains(p, "%") || !cleanPath(strings.TrimRight(p, "/")) {
		return false
	}
	return p == s.path || strings.HasPrefix(p, s.path+"/")
}

// MatchesString is Matches on a URL in text. The authority is checked as
// written, so that a URL parsers read differently (a backslash, an escaped
// or non-ASCII host, a user part) never matches.
func (s Scope) MatchesString(raw string) bool {
	u, ok := parseStrict(raw)
	return ok && s.Matches(u)
}

// Set is the scopes one credential is configured for.
type Set []Scope

// ParseSet parses every entry of list.
func ParseSet(list []string) (Set, error) {
	var set Set
	for _, s := range list {
		sc, err := Parse(s)
		if err != nil {
			return nil, err
		}
		set = append(set, sc)
	}
	return set, nil
}

// MatchesString reports whether raw falls under one of the scopes.
func (set Set) MatchesString(raw string) bool {
	u, ok := parseStrict(raw)
	if !ok {
		return false
	}
	for _, s := range set {
		if s.Matches(u) {
			return true
		}
	}
	return false
}

// String lists the scopes.
func (set Set) String() string {
	parts := make([]string, len(set))
	for i, s := range set {
		parts[i] = s.String()
	}
	return strings.Join(parts, ", ")
}

// IsLoopback reports whether host (no port) is a loopback address or
// "localhost".
func IsLoopback(host string) bool {
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// parseStrict parses raw as an absolute URL and checks that its authority,
// as written, is exactly the host and port Go read: no user information,
// no escapes, no characters another URL parser could split differently.
func parseStrict(raw string) (*url.URL, bool) {
	if strings.ContainsAny(raw, "\\\x00\r\n\t ") {
		return nil, false
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || scheme == "" {
		return nil, false
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	if authority == "" || strings.ContainsAny(authority, "@%") {
		return nil, false
	}
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Opaque != "" || u.Host != authority || !validHost(u.Hostname()) {
		return nil, false
	}
	return u, true
}

// validHost accepts ASCII DNS names and IP literals without a trailing dot.
// Internationalised names are refused rather than compared in one of their
// several spellings.
func validHost(h string) bool {
	if h == "" || strings.HasSuffix(h, ".") {
		return false
	}
	if net.ParseIP(h) != nil {
		return true
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return !strings.Contains(h, "..") && !strings.HasPrefix(h, ".")
}

// portOf is u's port, the scheme's default when none is written.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// cleanPath reports whether p ("" or "/a/b") has no empty, "." or ".."
// segment.
func cleanPath(p string) bool {
	if p == "" {
		return true
	}
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// Transport attaches a credential to the requests that fall under Scope and
// to no other: a redirect to another origin, followed by the http.Client,
// reaches its target without it. Requests are cloned, never modified.
type Transport struct {
	// Base sends the requests (nil: http.DefaultTransport).
	Base http.RoundTripper
	// Scope is where the credential may go.
	Scope Scope
	// Header and Value are the header to set, e.g. "Authorization" and
	// "Bearer TOKEN". An empty Value sends nothing.
	Header, Value string
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if t.Value == "" || !t.Scope.Matches(req.URL) {
		if req.Header.Get(t.Header) != "" {
			// A credential set by someone else on a request to another
			// origin is dropped too.
			req = req.Clone(req.Context())
			req.Header.Del(t.Header)
		}
		return base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	req.Header.Set(t.Header, t.Value)
	return base.RoundTrip(req)
}

// CheckRedirect is an http.Client.CheckRedirect that stops after ten
// redirects and removes credentials (Authorization, cookies, API key
// headers) from a redirect that leaves the origin of the first request:
// the scheme, host and port. Go's own rule keeps them for another port of
// the same host and for subdomains.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	first := via[0].URL
	if !sameOrigin(first, req.URL) {
		for _, h := range []string{"Authorization", "Proxy-Authorization", "Cookie", "Api-Key", "X-Api-Key"} {
			req.Header.Del(h)
		}
	}
	return nil
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && portOf(a) == portOf(b)
}
