package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Roles: a viewer reads; an admin may also cancel a batch.
const (
	roleViewer = "viewer"
	roleAdmin  = "admin"
)

const sessionCookie = "reviewfleet_console"

// principal is who a request comes from.
type principal struct {
	User string // "token", "admin-token" or the proxy's user name
	Role string
	Via  string // bearer, session, proxy
	// csrf is the token a form must carry to write (empty for bearer
	// requests: a browser never adds that header on its own).
	CSRF string
}

func (p principal) Admin() bool { return p.Role == roleAdmin }

type ctxKey struct{}

func who(ctx context.Context) principal {
	p, _ := ctx.Value(ctxKey{}).(principal)
	return p
}

// authenticator decides who a request comes from. Session cookies are
// signed with a key derived from the configured tokens, so changing a
// token ends every session made with the old one, and several console
// replicas accept each other's sessions.
type authenticator struct {
	opts       Options
	sessionKey []byte
	csrfKey    []byte
}

func newAuthenticator(opts Options) *authenticator {
	a := &authenticator{opts: opts}
	if opts.Token != "" || opts.AdminToken != "" {
		m := hmac.New(sha256.New, []byte("reviewfleet console session key"))
		m.Write([]byte(opts.Token))
		m.Write([]byte{0})
		m.Write([]byte(opts.AdminToken))
		a.sessionKey = m.Sum(nil)
	}
	// Proxy users carry no cookie of ours; their form tokens are signed
	// with a key of this process.
	a.csrfKey = make([]byte, 32)
	_, _ = rand.Read(a.csrfKey)
	return a
}

// tokenRole compares a presented token with the configured ones in
// constant time, and returns its role ("" when it matches none).
func (a *authenticator) tokenRole(tok string) string {
	if tok == "" {
		return ""
	}
	admin := a.opts.AdminToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(a.opts.AdminToken)) == 1
	viewer := a.opts.Token != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(a.opts.Token)) == 1
	switch {
	case admin:
		return roleAdmin
	case viewer:
		return roleViewer
	}
	return ""
}

// fromTrustedProxy reports whether the request's peer is a configured proxy.
func (a *authenticator) fromTrustedProxy(r *http.Request) bool {
	if len(a.opts.TrustedProxies) == 0 {
		return false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	for _, p := range a.opts.TrustedProxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// identify returns the request's principal, or false.
func (a *authenticator) identify(r *http.Request) (principal, bool) {
	if h := a.opts.ProxyUserHeader; h != "" && a.fromTrustedProxy(r) {
		if user := strings.TrimSpace(r.Header.Get(h)); user != "" && len(user) <= 256 {
			role := roleViewer
			if slices.Contains(a.opts.AdminUsers, user) {
				role = roleAdmin
			}
			return principal{User: user, Role: role, Via: "proxy", CSRF: a.sign(a.csrfKey, "csrf\x00"+user)}, true
		}
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		scheme, tok, ok := strings.Cut(auth, " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			if role := a.tokenRole(strings.TrimSpace(tok)); role != "" {
				return principal{User: role + "-token", Role: role, Via: "bearer"}, true
			}
		}
		return principal{}, false // a wrong token is not overridden by a cookie
	}
	if ck, err := r.Cookie(sessionCookie); err == nil {
		if s, ok := a.readSession(ck.Value); ok {
			return principal{User: s.User, Role: s.Role, Via: "session", CSRF: a.sign(a.sessionKey, "csrf\x00"+ck.Value)}, true
		}
	}
	return principal{}, false
}

type session struct {
	User    string `json:"u"`
	Role    string `json:"r"`
	Expires int64  `json:"e"`
}

func (a *authenticator) sign(key []byte, msg string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (a *authenticator) newSession(role string, now time.Time) string {
	body, _ := json.Marshal(session{User: role + "-token", Role: role, Expires: now.Add(a.opts.SessionTTL).Unix()})
	payload := base64.RawURLEncoding.EncodeToString(body)
	return payload + "." + a.sign(a.sessionKey, payload)
}

func (a *authenticator) readSession(v string) (session, bool) {
	if a.sessionKey == nil {
		return session{}, false
	}
	payload, sig, ok := strings.Cut(v, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(a.sign(a.sessionKey, payload))) {
		return session{}, false
	}
	body, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return session{}, false
	}
	var s session
	if json.Unmarshal(body, &s) != nil || a.opts.Now().Unix() >= s.Expires {
		return session{}, false
	}
	if s.Role != roleViewer && s.Role != roleAdmin {
		return session{}, false
	}
	return s, true
}

// secureRequest reports whether the browser reached us over TLS: directly,
// or through a trusted proxy that says so.
func (a *authenticator) secureRequest(r *http.Request) bool {
	return r.TLS != nil || (a.fromTrustedProxy(r) && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https"))
}

// protect serves h only to an authenticated request; others get 401 and
// the sign-in form. Writes (POST) also need the form token of the
// principal's session and a same-origin request.
func (c *Console) protect(h func(http.ResponseWriter, *http.Request)) http.Handler {
	return secure(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A page answers within a minute; the event stream extends its own.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Minute))
		p, ok := c.auth.identify(r)
		if !ok {
			c.refuse(w, r)
			return
		}
		if r.Method == http.MethodPost && !c.csrfOK(r, p) {
			http.Error(w, "refused: the form token is missing or wrong, or the request came from another site", http.StatusForbidden)
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, p)))
	}))
}

// protectQueues serves the queue monitor, read-only: only GET and HEAD.
func (c *Console) protectQueues(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header(), queuesPolicy)
		if _, ok := c.auth.identify(r); !ok {
			setSecurityHeaders(w.Header(), contentSecurityPolicy)
			c.refuse(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "the queue monitor is read-only", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (c *Console) csrfOK(r *http.Request, p principal) bool {
	if p.Via == "bearer" {
		return true
	}
	if !sameSite(r) {
		return false
	}
	got := r.PostFormValue("csrf")
	return p.CSRF != "" && hmac.Equal([]byte(got), []byte(p.CSRF))
}

// sameSite reports whether a browser says the request came from this site
// (or from no site: typed, bookmarked); browsers that do not say are let
// through, the form token still guards the writes.
func sameSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

func (c *Console) refuse(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="reviewfleet console"`)
	if strings.Contains(r.Header.Get("Accept"), "text/html") && r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		c.renderTo(w, "login", loginData{Next: localPath(r.URL.RequestURI()), Tokens: c.auth.sessionKey != nil, Proxy: c.opts.ProxyUserHeader != ""})
		return
	}
	http.Error(w, "authentication required", http.StatusUnauthorized)
}

// localPath keeps a redirect target on this site.
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") || strings.ContainsAny(p, "\r\n") {
		return "/"
	}
	return p
}

type loginData struct {
	Next   string
	Error  string
	Tokens bool
	Proxy  bool
}

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, "login", loginData{Next: localPath(r.URL.Query().Get("next")), Tokens: c.auth.sessionKey != nil, Proxy: c.opts.ProxyUserHeader != ""})
}

// login exchanges a token for a session cookie.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if !sameSite(r) {
		// A form on another site must not sign a browser into a session
		// of someone else's token.
		http.Error(w, "refused: the sign-in came from another site", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	next := localPath(r.PostFormValue("next"))
	role := ""
	if c.auth.sessionKey != nil {
		role = c.auth.tokenRole(r.PostFormValue("token"))
	}
	if role == "" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		c.renderTo(w, "login", loginData{Next: next, Error: "That token is not valid.", Tokens: c.auth.sessionKey != nil, Proxy: c.opts.ProxyUserHeader != ""})
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: c.auth.newSession(role, c.opts.Now()), Path: "/",
		MaxAge: int(c.opts.SessionTTL.Seconds()), HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: c.auth.secureRequest(r),
	})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.auth.secureRequest(r)})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
