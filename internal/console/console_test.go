package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reviewfleet/reviewfleet/internal/console"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

const (
	viewerToken = "viewer-token-0123456789abcdef"
	adminToken  = "admin-token-0123456789abcdef"
	reviewID    = "7d1c0a52-0000-4000-8000-000000000001"
	batchID     = "7d1c0a52-0000-4000-8000-0000000000b1"
	hostile     = `<img src=x onerror=alert(1)>`
)

// seeded is a console over a database holding one batch with one review
// whose every text carries markup.
type seeded struct {
	srv       *httptest.Server
	cancelled []string
	mu        sync.Mutex
	now       time.Time
}

func seed(t *testing.T, edit func(*console.Options)) *seeded {
	t.Helper()
	ctx := context.Background()
	dsn := testenv.IsolatedSchema(t)
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	stmts := []string{
		`INSERT INTO batches (id, name, source, status, labels, entries, submitted)
		 VALUES ('` + batchID + `', 'batch ` + hostile + `', 'manifest:` + hostile + `', 'submitted', '{"team": "` + hostile + `"}', 1, 1)`,
		`INSERT INTO reviews (id, batch_id, repo, source, base_ref, head_ref, status, stage, kind, error, deadline_at, created_at, started_at, finished_at)
		 VALUES ('` + reviewID + `', '` + batchID + `', 'https://example.invalid/` + hostile + `.git', 'git', 'main', 'feature` + hostile + `',
		         'running', 'expert', 'bulk', '` + hostile + `', now() + interval '1 hour', now(), now(), NULL)`,
		`INSERT INTO batch_reviews (batch_id, line, repo, base_ref, head_ref, labels, review_id)
		 VALUES ('` + batchID + `', 1, 'https://example.invalid/` + hostile + `.git', 'main', 'feature', '{"team": "` + hostile + `"}', '` + reviewID + `')`,
		`INSERT INTO review_files (review_id, path, change, content)
		 VALUES ('` + reviewID + `', '` + hostile + `.go', 'added', E'package x\n\nfunc f() { ` + hostile + ` }\n')`,
		`INSERT INTO findings (id, review_id, origin, ordinal, risk_type, file, line_start, line_end, description, suggestion, severity,
		                       confidence_initial, confidence, status, fix_diff)
		 VALUES (1, '` + reviewID + `', 'intent:1', 0, 'robustness', '` + hostile + `.go', 3, 3, 'the model says ` + hostile + `',
		         'do ` + hostile + `', 'high', 0.8, 0.9, 'active', E'--- a/x\n+++ b/x\n@@ -1 +1 @@\n-` + hostile + `\n+fixed\n')`,
		`INSERT INTO verdicts (review_id, finding_id, stage, verdict, confidence_before, confidence_after, reason, evidence)
		 VALUES ('` + reviewID + `', 1, 'verify', 'anchored', 0.8, 0.9, 'reason ` + hostile + `', '["evidence ` + hostile + `"]')`,
		`INSERT INTO expert_runs (review_id, finding_id, stop_reason, rounds) VALUES ('` + reviewID + `', 1, 'submitted', 2)`,
		`INSERT INTO expert_tool_calls (review_id, finding_id, round, seq, tool, args, outcome)
		 VALUES ('` + reviewID + `', 1, 1, 1, 'grep', '{"pattern": "` + hostile + `"}', 'hit')`,
	}
	for _, q := range stmts {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("seed: %v\n%s", err, q)
		}
	}
	s := &seeded{now: time.Now()}
	opts := console.Options{
		DB: pool, Token: viewerToken, AdminToken: adminToken,
		Canceller: func(_ context.Context, id string) (int, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.cancelled = append(s.cancelled, id)
			return 1, nil
		},
		Now: func() time.Time { s.mu.Lock(); defer s.mu.Unlock(); return s.now },
	}
	if edit != nil {
		edit(&opts)
	}
	c, err := console.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.srv = httptest.NewServer(c)
	t.Cleanup(s.srv.Close)
	return s
}

func fetch(t *testing.T, client *http.Client, u string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var pages = []string{"/", "/reviews", "/reviews/" + reviewID, "/reviews/" + reviewID + "/report.json", "/batches",
	"/batches/" + batchID, "/batches/" + batchID + "/events", "/fleet", "/repos?repo=x", "/search?q=x"}

func TestEveryPageNeedsSignIn(t *testing.T) {
	s := seed(t, nil)
	for _, p := range pages {
		for _, hdr := range []map[string]string{nil, {"Authorization": "Bearer " + viewerToken + "x"},
			{"Authorization": "Basic " + viewerToken}, {"Cookie": "reviewfleet_console=e30.forged"}, {"X-Forwarded-User": "alice"}} {
			resp, _ := fetch(t, http.DefaultClient, s.srv.URL+p, hdr)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s with %v: %d, want 401", p, hdr, resp.StatusCode)
			}
		}
	}
	resp, body := fetch(t, http.DefaultClient, s.srv.URL+"/", map[string]string{"Accept": "text/html"})
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `name="token"`) {
		t.Errorf("a browser is not offered the sign-in form: %d\n%s", resp.StatusCode, body)
	}
	for _, p := range pages[:3] {
		if resp, _ := fetch(t, http.DefaultClient, s.srv.URL+p, map[string]string{"Authorization": "Bearer " + viewerToken}); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s with the token: %d", p, resp.StatusCode)
		}
	}
}

func TestSecurityHeaders(t *testing.T) {
	s := seed(t, nil)
	for _, p := range []string{"/", "/reviews/" + reviewID, "/login", "/static/console.css"} {
		resp, _ := fetch(t, http.DefaultClient, s.srv.URL+p, map[string]string{"Authorization": "Bearer " + viewerToken})
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: Content-Security-Policy %q", p, csp)
		}
		if resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: X-Frame-Options %q, X-Content-Type-Options %q", p, resp.Header.Get("X-Frame-Options"), resp.Header.Get("X-Content-Type-Options"))
		}
	}
}

func TestMarkupFromTheFleetIsEscaped(t *testing.T) {
	s := seed(t, nil)
	auth := map[string]string{"Authorization": "Bearer " + viewerToken}
	for _, p := range []string{"/", "/reviews", "/reviews/" + reviewID, "/batches", "/batches/" + batchID, "/fleet",
		"/repos?repo=" + url.QueryEscape("https://example.invalid/"+hostile+".git"), "/search?in=file&q=%3Cimg", "/search?in=text&q=model",
		"/search?in=repo&q=example"} {
		resp, body := fetch(t, http.DefaultClient, s.srv.URL+p, auth)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", p, resp.StatusCode, body)
		}
		if strings.Contains(body, "<img") || strings.Contains(body, "onerror=alert(1)>") {
			t.Errorf("GET %s: markup from the fleet reached the page unescaped", p)
		}
		if p != "/fleet" && p != "/batches" && !strings.Contains(body, "&lt;img src=x onerror=alert(1)&gt;") {
			t.Errorf("GET %s: the hostile text is not shown escaped", p)
		}
	}
	_, body := fetch(t, http.DefaultClient, s.srv.URL+"/reviews/"+reviewID, auth)
	for _, want := range []string{"reason &lt;img", "evidence &lt;img", "the model says &lt;img", `{&#34;pattern&#34;: &#34;&lt;img`} {
		if !strings.Contains(body, want) {
			t.Errorf("the review page lacks %q", want)
		}
	}
}

// signIn exchanges a token for a session cookie in jar.
func signIn(t *testing.T, s *seeded, token string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(s.srv.URL+"/login", url.Values{"token": {token}, "next": {"//evil.example/"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("sign in: %d to %q, want 303 to / (never off the site)", resp.StatusCode, resp.Header.Get("Location"))
	}
	ck := resp.Header.Get("Set-Cookie")
	if !strings.Contains(ck, "HttpOnly") || !strings.Contains(ck, "SameSite=Strict") || strings.Contains(ck, "Secure") {
		t.Fatalf("session cookie %q: want HttpOnly, SameSite=Strict, and not Secure over plain http", ck)
	}
	return client
}

func TestSessionCookie(t *testing.T) {
	s := seed(t, nil)
	resp, err := http.PostForm(s.srv.URL+"/login", url.Values{"token": {"not-the-token-0123456789"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Fatalf("a wrong token: %d with cookies %v", resp.StatusCode, resp.Cookies())
	}
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/login", strings.NewReader(url.Values{"token": {viewerToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Fatalf("a sign-in from another site: %d with cookies %v, want 403 and none", resp.StatusCode, resp.Cookies())
	}
	client := signIn(t, s, viewerToken)
	if resp, _ := fetch(t, client, s.srv.URL+"/reviews/"+reviewID, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("with the session: %d", resp.StatusCode)
	}
	s.mu.Lock()
	s.now = s.now.Add(13 * time.Hour)
	s.mu.Unlock()
	if resp, _ := fetch(t, client, s.srv.URL+"/reviews/"+reviewID, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("with an expired session: %d, want 401", resp.StatusCode)
	}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func TestCancelNeedsAdminAndFormToken(t *testing.T) {
	s := seed(t, nil)
	cancelURL := s.srv.URL + "/batches/" + batchID + "/cancel"
	post := func(client *http.Client, form url.Values, hdr map[string]string) int {
		req, _ := http.NewRequest(http.MethodPost, cancelURL, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	viewer := signIn(t, s, viewerToken)
	_, page := fetch(t, viewer, s.srv.URL+"/batches/"+batchID, nil)
	if strings.Contains(page, "/cancel") {
		t.Error("a viewer is offered the cancel button")
	}
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no form token on the page of a signed-in viewer")
	}
	if code := post(viewer, url.Values{"csrf": {m[1]}}, nil); code != http.StatusForbidden {
		t.Errorf("a viewer cancelling: %d, want 403", code)
	}
	admin := signIn(t, s, adminToken)
	_, page = fetch(t, admin, s.srv.URL+"/batches/"+batchID, nil)
	if !strings.Contains(page, "/batches/"+batchID+"/cancel") {
		t.Fatal("an admin is not offered the cancel button")
	}
	m = csrfField.FindStringSubmatch(page)
	for name, tc := range map[string]struct {
		form url.Values
		hdr  map[string]string
	}{
		"no form token":     {url.Values{}, nil},
		"wrong form token":  {url.Values{"csrf": {m[1] + "x"}}, nil},
		"viewer's token":    {url.Values{"csrf": {csrfField.FindStringSubmatch(page)[1][:10]}}, nil},
		"from another site": {url.Values{"csrf": {m[1]}}, map[string]string{"Sec-Fetch-Site": "cross-site"}},
	} {
		if code := post(admin, tc.form, tc.hdr); code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, code)
		}
	}
	if len(s.cancelled) != 0 {
		t.Fatalf("refused requests cancelled %v", s.cancelled)
	}
	if code := post(admin, url.Values{"csrf": {m[1]}}, map[string]string{"Sec-Fetch-Site": "same-origin"}); code != http.StatusSeeOther {
		t.Fatalf("an admin cancelling with the form token: %d, want 303", code)
	}
	if fmt.Sprint(s.cancelled) != "["+batchID+"]" {
		t.Fatalf("cancelled %v, want the batch", s.cancelled)
	}
}

func TestTrustedProxyHeader(t *testing.T) {
	for _, tc := range []struct {
		cidr string
		want int
	}{{"10.0.0.0/8", http.StatusUnauthorized}, {"127.0.0.0/8", http.StatusOK}, {"::1/128", http.StatusUnauthorized}} {
		s := seed(t, func(o *console.Options) {
			o.ProxyUserHeader = "X-Forwarded-User"
			o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix(tc.cidr)}
		})
		resp, body := fetch(t, http.DefaultClient, s.srv.URL+"/", map[string]string{"X-Forwarded-User": "alice"})
		if resp.StatusCode != tc.want {
			t.Errorf("proxies %s: %d, want %d", tc.cidr, resp.StatusCode, tc.want)
		}
		if tc.want == http.StatusOK && !strings.Contains(body, "alice (viewer)") {
			t.Errorf("proxies %s: the page does not name the proxy's user", tc.cidr)
		}
	}
}

// The session cookie is Secure when the browser came over TLS: directly,
// or through a trusted proxy that says so. An untrusted peer's
// X-Forwarded-Proto changes nothing.
func TestSessionCookieSecureOverTLS(t *testing.T) {
	s := seed(t, func(o *console.Options) {
		o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		o.ProxyUserHeader = "X-Forwarded-User"
	})
	tlsSrv := httptest.NewTLSServer(s.srv.Config.Handler)
	t.Cleanup(tlsSrv.Close)
	untrusted := seed(t, nil)
	for _, tc := range []struct {
		name, url string
		client    *http.Client
		proto     string
		secure    bool
	}{
		{"plain http", s.srv.URL, http.DefaultClient, "", false},
		{"https", tlsSrv.URL, tlsSrv.Client(), "", true},
		{"trusted proxy, https", s.srv.URL, http.DefaultClient, "https", true},
		{"untrusted peer claiming https", untrusted.srv.URL, http.DefaultClient, "https", false},
	} {
		req, _ := http.NewRequest(http.MethodPost, tc.url+"/login", strings.NewReader(url.Values{"token": {viewerToken}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if tc.proto != "" {
			req.Header.Set("X-Forwarded-Proto", tc.proto)
		}
		client := *tc.client
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ck := resp.Header.Get("Set-Cookie")
		if ck == "" || strings.Contains(ck, "Secure") != tc.secure {
			t.Errorf("%s: cookie %q, want Secure=%v", tc.name, ck, tc.secure)
		}
	}
}
