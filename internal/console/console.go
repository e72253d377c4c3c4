// Package console is reviewfleet's read-only web console: batches, reviews
// with their findings and verdict trails, repositories and the fleet, over
// the fleet's database and Redis. Pages are rendered on the server with
// html/template from embedded files and read without JavaScript; a little
// plain JavaScript (static/live.js) follows a batch's progress through
// server-sent events.
//
// Nothing is served without authentication (auth.go), every page carries
// a strict Content Security Policy, and every text that comes from a
// repository, a pull request or a model is escaped by the templates. The
// pages read through their own connection pool, meant to log in as a
// member of the read-only role reviewfleet_console; the one write, an
// admin cancelling a batch, goes through the fleet's store.
package console

import (
	"context"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configures a console.
type Options struct {
	// DB is the pool the pages read through (a read-only role's).
	DB *pgxpool.Pool
	// Inspector and Redis read the queues and the workers' heartbeats
	// (nil: the fleet page says Redis is not configured).
	Inspector *asynq.Inspector
	Redis     redis.UniversalClient
	// Queues, when set, is mounted at /queues behind the same
	// authentication (asynqmon, read-only).
	Queues http.Handler
	// Canceller cancels a batch for an admin (nil: no cancel button).
	Canceller func(ctx context.Context, batchID string) (int, error)
	// Token and AdminToken sign in as viewer and admin.
	Token, AdminToken string
	// TrustedProxies may name the user in ProxyUserHeader; AdminUsers
	// among them are admins.
	TrustedProxies  []netip.Prefix
	ProxyUserHeader string
	AdminUsers      []string
	// SessionTTL is a session cookie's lifetime (default 12h).
	SessionTTL time.Duration
	// FleetRequestsPerMinute and FleetTokensPerMinute are the fleet's
	// LLM quota, shown against what was used (0: none configured).
	FleetRequestsPerMinute, FleetTokensPerMinute int
	// QueryTimeout bounds every page's queries (default 10s).
	QueryTimeout time.Duration
	Log          *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Console serves the web console.
type Console struct {
	opts  Options
	auth  *authenticator
	pages map[string]*template.Template
	mux   *http.ServeMux
}

// New builds a console. It refuses a configuration with no way to sign in.
func New(opts Options) (*Console, error) {
	if opts.DB == nil {
		return nil, fmt.Errorf("console: no database")
	}
	if opts.Token == "" && opts.AdminToken == "" && opts.ProxyUserHeader == "" {
		return nil, fmt.Errorf("console: no way to sign in: set console.token (REVIEWFLEET_CONSOLE_TOKEN) or console.proxy_user_header with console.trusted_proxies")
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = 12 * time.Hour
	}
	if opts.QueryTimeout <= 0 {
		opts.QueryTimeout = 10 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	c := &Console{opts: opts, pages: pages, auth: newAuthenticator(opts)}
	c.routes()
	return c, nil
}

// ServeHTTP serves the console.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) { c.mux.ServeHTTP(w, r) }

func (c *Console) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	// Stylesheet and script only: nothing the fleet stored.
	m.Handle("GET /static/", secure(http.StripPrefix("/static/", http.FileServerFS(static))))
	m.Handle("GET /login", secure(http.HandlerFunc(c.loginPage)))
	m.Handle("POST /login", secure(http.HandlerFunc(c.login)))
	m.Handle("POST /logout", c.protect(c.logout))

	m.Handle("GET /{$}", c.protect(c.home))
	m.Handle("GET /reviews", c.protect(c.reviewList))
	m.Handle("GET /reviews/{id}", c.protect(c.reviewPage))
	m.Handle("GET /reviews/{id}/{file}", c.protect(c.download))
	m.Handle("GET /batches", c.protect(c.batchList))
	m.Handle("GET /batches/{id}", c.protect(c.batchPage))
	m.Handle("GET /batches/{id}/events", c.protect(c.batchEvents))
	m.Handle("POST /batches/{id}/cancel", c.protect(c.cancelBatch))
	m.Handle("GET /fleet", c.protect(c.fleetPage))
	m.Handle("GET /repos", c.protect(c.repoPage))
	m.Handle("GET /search", c.protect(c.searchPage))
	if c.opts.Queues != nil {
		m.Handle("/queues/", c.protectQueues(c.opts.Queues))
		m.Handle("GET /queues", http.RedirectHandler("/queues/", http.StatusMovedPermanently))
	}
	c.mux = m
}

// contentSecurityPolicy allows the console's own stylesheet and script and
// nothing else: no inline script or style, no frames, forms only to itself.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// queuesPolicy is the queue monitor's: its single-page application starts
// from inline scripts and styles its components inline. It still may not
// be framed, load scripts from elsewhere or send forms elsewhere.
const queuesPolicy = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'self'"

func setSecurityHeaders(h http.Header, csp string) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// secure adds the security headers to every response of h.
func secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header(), contentSecurityPolicy)
		h.ServeHTTP(w, r)
	})
}
