package config

import (
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// Console configures `reviewfleet console`, the read-only web console over
// the fleet's database and Redis (see docs/console.md). Nothing is served
// without authentication: a token (Token, AdminToken) or a trusted
// reverse proxy's user header (ProxyUserHeader from TrustedProxies).
type Console struct {
	// Addr is where the console listens (default "127.0.0.1:8095"; env
	// REVIEWFLEET_CONSOLE_ADDR). `serve` also starts it there when Token
	// or ProxyUserHeader is set.
	Addr string `yaml:"addr"`
	// Token lets a person in: sent as "Authorization: Bearer TOKEN" or
	// exchanged on the sign-in page for a session cookie (default empty;
	// env REVIEWFLEET_CONSOLE_TOKEN). At least 16 characters.
	Token string `yaml:"token" json:"-"`
	// AdminToken signs in with the admin role, which may cancel a batch
	// (default empty: nobody signs in as admin with a token).
	AdminToken string `yaml:"admin_token" json:"-"`
	// DatabaseURL is the connection the pages read through (default
	// empty: database_url). Point it at a login role that is a member of
	// reviewfleet_console, which may only read.
	DatabaseURL string `yaml:"database_url" json:"-"`
	// TrustedProxies are the addresses (CIDRs, e.g. "10.0.0.0/8" or
	// "127.0.0.1/32") whose ProxyUserHeader is believed (default none).
	TrustedProxies []string `yaml:"trusted_proxies"`
	// ProxyUserHeader is the header in which a trusted reverse proxy
	// (oauth2-proxy: X-Forwarded-User or X-Auth-Request-User) names the
	// signed-in person (default empty: no proxy sign-in).
	ProxyUserHeader string `yaml:"proxy_user_header"`
	// AdminUsers are the proxy users given the admin role (default none).
	AdminUsers []string `yaml:"admin_users"`
	// SessionTTL is how long a session cookie lasts (default 12h).
	SessionTTL time.Duration `yaml:"session_ttl"`
	// TLSCertFile and TLSKeyFile serve https with this certificate and
	// key (PEM; default empty: plain http, for a TLS-terminating proxy in
	// front). Session cookies are marked Secure over TLS.
	TLSCertFile string `yaml:"tls_cert_file"`
	TLSKeyFile  string `yaml:"tls_key_file"`
}

// DefaultConsoleAddr is console.addr's default: the loopback interface,
// so a console is reachable from elsewhere only when configured to be.
const DefaultConsoleAddr = "127.0.0.1:8095"

func defaultConsole() Console {
	return Console{Addr: DefaultConsoleAddr, TrustedProxies: []string{}, AdminUsers: []string{}, SessionTTL: 12 * time.Hour}
}

// Enabled reports whether any way to sign in is configured.
func (c Console) Enabled() bool {
	return c.Token != "" || c.AdminToken != "" || c.ProxyUserHeader != ""
}

// Proxies parses TrustedProxies.
func (c Console) Proxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range c.TrustedProxies {
		s = strings.TrimSpace(s)
		if !strings.Contains(s, "/") {
			if a, err := netip.ParseAddr(s); err == nil {
				out = append(out, netip.PrefixFrom(a, a.BitLen()))
				continue
			}
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("console.trusted_proxies: %q is not an address or a CIDR", s)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func (c Console) validate(bad func(key, format string, args ...any)) {
	for _, t := range []struct{ key, tok string }{{"console.token", c.Token}, {"console.admin_token", c.AdminToken}} {
		if t.tok != "" && len(t.tok) < 16 {
			bad(t.key, "must be at least 16 characters, got %d", len(t.tok))
		}
	}
	if c.Token != "" && c.Token == c.AdminToken {
		bad("console.admin_token", "must differ from console.token")
	}
	if _, err := c.Proxies(); err != nil {
		bad("console.trusted_proxies", "%v", err)
	}
	if c.ProxyUserHeader != "" && len(c.TrustedProxies) == 0 {
		bad("console.proxy_user_header", "needs console.trusted_proxies: otherwise anyone could name themselves in the header")
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		bad("console.tls_cert_file", "console.tls_cert_file and console.tls_key_file go together")
	}
	if c.SessionTTL <= 0 {
		bad("console.session_ttl", "must be positive, got %s", c.SessionTTL)
	}
}
