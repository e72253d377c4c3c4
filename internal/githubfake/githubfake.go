// Package githubfake is a fake GitHub REST API on httptest for tests and
// local trials. It serves pull requests, their files and patches, and
// checks review comments as GitHub does: a comment must sit on the RIGHT
// side of the pull request's diff, within one hunk, or the whole review is
// refused with 422. It keeps the reviews and comments posted, and can
// answer one secondary rate limit (403 with Retry-After).
package githubfake

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/diff"
)

// PR is a pull request the fake serves.
type PR struct {
	Owner, Repo string
	Number      int
	Title, Body string
	Draft       bool
	BaseSHA     string
	HeadSHA     string
	// BaseCloneURL and HeadCloneURL are the repositories' clone URLs (a
	// file:// URL of a local repository works).
	BaseCloneURL, HeadCloneURL string
	Files                      []File
}

// File is a changed file of a pull request with its patch (hunks only, as
// the API gives them).
type File struct {
	Path, Status, Patch string
}

// Review is a review posted on a pull request.
type Review struct {
	ID       int64
	Number   int
	CommitID string
	Body     string
	Event    string
	User     string // the author's login
}

// Comment is an inline review comment.
type Comment struct {
	ID        int64
	ReviewID  int64
	Number    int
	CommitID  string
	Path      string
	Line      int
	StartLine int
	Side      string
	Body      string
	User      string // the author's login
	// InReplyTo is the comment this one answers in its thread (0: it
	// starts the thread).
	InReplyTo int64
	CreatedAt time.Time
}

// Server is a running fake.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	prs      map[string]*PR
	reviews  []Review
	comments []Comment
	nextID   int64
	limitOne bool
	appKey   *rsa.PublicKey
	latency  time.Duration
	auths    []string
	limited  int
	rejected int
	mux      *http.ServeMux
	git      gitRepos

	feedback      feedbackState
	reactionCalls int

	notInstalled map[string]bool // owner/repo the App is not installed on
	revoked      bool            // the installation is gone
	tokenTTL     time.Duration   // of installation tokens (0: an hour)
}

// New starts a fake serving prs over http.
func New(prs ...PR) *Server {
	s := newServer(prs)
	s.Server = httptest.NewServer(s.handler())
	return s
}

// NewTLS starts a fake serving prs over https, with a certificate of its
// own (Server.Certificate; Server.Client trusts it). Git remotes it
// serves (ServeGit) are https remotes, as GitHub's are.
func NewTLS(prs ...PR) *Server {
	s := newServer(prs)
	s.Server = httptest.NewTLSServer(s.handler())
	return s
}

func newServer(prs []PR) *Server {
	s := &Server{prs: map[string]*PR{}, nextID: 1000, mux: http.NewServeMux()}
	for i := range prs {
		s.AddPR(prs[i])
	}
	mux := s.mux
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}", s.getPR)
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls", s.listPRs)
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}/files", s.listFiles)
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}/reviews", s.listReviews)
	mux.HandleFunc("POST /repos/{owner}/{repo}/pulls/{n}/reviews", s.createReview)
	mux.HandleFunc("PUT /repos/{owner}/{repo}/pulls/{n}/reviews/{id}", s.updateReview)
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}/reviews/{id}", s.getReview)
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}/comments", s.listComments)
	mux.HandleFunc("GET /repos/{owner}/{repo}/compare/{spec}", s.compare)
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{n}/comments", s.listIssueComments)
	mux.HandleFunc("GET /repos/{owner}/{repo}/collaborators/{user}", s.collaborator)
	mux.HandleFunc("POST /graphql", s.graphql)
	mux.HandleFunc("GET /orgs/{org}/repos", s.listOrgRepos)
	mux.HandleFunc("GET /repos/{owner}/{repo}/installation", s.installation)
	mux.HandleFunc("GET /_fake/state", s.state)
	mux.HandleFunc("GET /user", s.user)
	mux.HandleFunc("GET /app", s.app)
	s.scriptRoutes()
	mux.HandleFunc("POST /app/installations/{id}/access_tokens", s.accessToken)
	return s
}

// handler serves the routes after the configured latency.
func (s *Server) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		d := s.latency
		s.mu.Unlock()
		time.Sleep(d)
		if s.serveReactions(w, r) {
			return
		}
		s.mux.ServeHTTP(w, r)
	})
}

func key(owner, repo string, n int) string { return fmt.Sprintf("%s/%s#%d", owner, repo, n) }

// AddPR serves pr (replacing one with the same number: a new push).
func (s *Server) AddPR(pr PR) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := pr
	s.prs[key(pr.Owner, pr.Repo, pr.Number)] = &p
}

// InstallationToken is the token the fake issues to a GitHub App.
const InstallationToken = "ghs_fake_installation_token"

// RequireApp makes the fake check GitHub App JWTs against key on the App
// endpoints, and the installation token on every other request.
func (s *Server) RequireApp(key *rsa.PublicKey) {
	s.mu.Lock()
	s.appKey = key
	s.mu.Unlock()
}

// Auths returns the Authorization headers received, in order.
func (s *Server) Auths() []string { s.mu.Lock(); defer s.mu.Unlock(); return slices.Clone(s.auths) }

// authorize records the Authorization header and, with an App key, checks
// a JWT (app endpoints) or the installation token (the rest).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, app bool) bool {
	auth := r.Header.Get("Authorization")
	s.mu.Lock()
	s.auths = append(s.auths, auth)
	key := s.appKey
	s.mu.Unlock()
	if key == nil {
		return true
	}
	token, ok := strings.CutPrefix(auth, "Bearer ")
	if ok && app {
		ok = verifyJWT(key, token)
	} else if ok {
		ok = token == InstallationToken
	}
	if !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
	}
	return ok
}

// verifyJWT checks an RS256 token's signature and its time window.
func verifyJWT(key *rsa.PublicKey, token string) bool {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return false
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], sig) != nil {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct{ Iat, Exp, Iss int64 }
	if err != nil || json.Unmarshal(raw, &claims) != nil {
		return false
	}
	now := time.Now().Unix()
	return claims.Iss != 0 && claims.Iat <= now && now < claims.Exp && claims.Exp-claims.Iat <= 600
}

// The logins the fake gives its callers: a token's user, and the App's
// bot (its slug with "[bot]").
const (
	TokenLogin = "reviewfleet-bot"
	AppSlug    = "reviewfleet-test"
)

// login is who r's credentials act as.
func (s *Server) login(r *http.Request) string {
	s.mu.Lock()
	app := s.appKey != nil
	s.mu.Unlock()
	if app {
		return AppSlug + "[bot]"
	}
	return TokenLogin
}

// user answers GET /user as GitHub does: the token's user, and 403 for an
// App installation token.
func (s *Server) user(w http.ResponseWriter, r *http.Request) {
	if !s.authorize(w, r, false) {
		return
	}
	s.mu.Lock()
	app := s.appKey != nil
	s.mu.Unlock()
	if app {
		writeJSON(w, http.StatusForbidden, map[string]string{"message": "Resource not accessible by integration"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"login": TokenLogin})
}

// app answers GET /app (JWT) with the App's slug.
func (s *Server) app(w http.ResponseWriter, r *http.Request) {
	if s.authorize(w, r, true) {
		writeJSON(w, http.StatusOK, map[string]any{"id": 1, "slug": AppSlug})
	}
}

// AddForeignReview adds a review written by someone else (login) to pull
// request n, with one inline comment body when comment is not empty, as a
// person reviewing the pull request would.
func (s *Server) AddForeignReview(n int, login, body, comment string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	rv := Review{ID: s.nextID, Number: n, Body: body, Event: "COMMENT", User: login}
	s.reviews = append(s.reviews, rv)
	if comment != "" {
		s.nextID++
		s.comments = append(s.comments, Comment{ID: s.nextID, ReviewID: rv.ID, Number: n, Body: comment, Side: "RIGHT", User: login})
	}
}

func (s *Server) installation(w http.ResponseWriter, r *http.Request) {
	if !s.authorize(w, r, true) {
		return
	}
	s.mu.Lock()
	missing := s.revoked || s.notInstalled[strings.ToLower(r.PathValue("owner")+"/"+r.PathValue("repo"))]
	s.mu.Unlock()
	if missing {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": 42})
}

// Uninstall removes the App's installation: look-ups and token requests
// answer 404 from now on.
func (s *Server) Uninstall() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked = true
}

// SetTokenLifetime sets how long the installation tokens it issues are
// valid (default an hour).
func (s *Server) SetTokenLifetime(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokenTTL = d
}

// NotInstalled makes the App's installation look-up of owner/repo answer
// 404, as GitHub does for a repository the App is not installed on (a
// contributor's fork, say). Every other repository is on installation 42.
func (s *Server) NotInstalled(owner, repo string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.notInstalled == nil {
		s.notInstalled = map[string]bool{}
	}
	s.notInstalled[strings.ToLower(owner+"/"+repo)] = true
}

func (s *Server) accessToken(w http.ResponseWriter, r *http.Request) {
	if !s.authorize(w, r, true) {
		return
	}
	s.mu.Lock()
	revoked, ttl := s.revoked, s.tokenTTL
	s.mu.Unlock()
	if revoked {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	if ttl == 0 {
		ttl = time.Hour
	}
	writeJSON(w, http.StatusCreated, map[string]any{"token": InstallationToken, "expires_at": time.Now().Add(ttl).UTC().Format(time.RFC3339)})
}

// SetLatency delays every answer by d, so concurrent clients overlap.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	s.latency = d
	s.mu.Unlock()
}

// RateLimitOnce makes the next write request answer 403 with Retry-After.
func (s *Server) RateLimitOnce() {
	s.mu.Lock()
	s.limitOne = true
	s.mu.Unlock()
}

// Limited counts the rate-limit answers given; Rejected the 422 answers.
func (s *Server) Limited() int { s.mu.Lock(); defer s.mu.Unlock(); return s.limited }

// Rejected counts reviews refused with 422.
func (s *Server) Rejected() int { s.mu.Lock(); defer s.mu.Unlock(); return s.rejected }

// Reviews returns the reviews posted on pull request n.
func (s *Server) Reviews(n int) []Review {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Review
	for _, r := range s.reviews {
		if r.Number == n {
			out = append(out, r)
		}
	}
	return out
}

// Comments returns the inline comments posted on pull request n.
func (s *Server) Comments(n int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments {
		if c.Number == n {
			out = append(out, c)
		}
	}
	return out
}

// Commentable returns, per path, the RIGHT-side lines of pr's diff a
// comment may sit on, each with the index of its hunk.
func Commentable(files []File) map[string]map[int]int {
	out := map[string]map[int]int{}
	for _, f := range files {
		lines := map[int]int{}
		parsed, err := diff.Parse([]byte("--- a/" + f.Path + "\n+++ b/" + f.Path + "\n" + f.Patch))
		if err == nil && len(parsed) == 1 {
			for hi, h := range parsed[0].Hunks {
				for _, l := range h.Lines {
					if l.Kind != diff.Deleted {
						lines[l.NewNo] = hi
					}
				}
			}
		}
		out[f.Path] = lines
	}
	return out
}

func (s *Server) pr(w http.ResponseWriter, r *http.Request) *PR {
	if !s.authorize(w, r, false) {
		return nil
	}
	n, _ := strconv.Atoi(r.PathValue("n"))
	s.mu.Lock()
	p := s.prs[key(r.PathValue("owner"), r.PathValue("repo"), n)]
	s.mu.Unlock()
	if p == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	}
	return p
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) prJSON(p *PR) map[string]any {
	repo := func(owner, name, clone string) map[string]any {
		return map[string]any{"name": name, "full_name": owner + "/" + name, "clone_url": clone, "owner": map[string]any{"login": owner}}
	}
	headOwner := p.Owner
	if p.HeadCloneURL != p.BaseCloneURL {
		headOwner = "fork-of-" + p.Owner
	}
	state, merged, closedAt := "open", false, any(nil)
	if f, ok := s.feedback.fates[key(p.Owner, p.Repo, p.Number)]; ok {
		state, merged, closedAt = "closed", f.merged, f.at.UTC().Format(time.RFC3339)
	}
	out := map[string]any{
		"number": p.Number, "title": p.Title, "body": p.Body, "draft": p.Draft, "state": state, "merged": merged, "closed_at": closedAt,
		"html_url": fmt.Sprintf("%s/%s/%s/pull/%d", s.URL, p.Owner, p.Repo, p.Number),
		"base":     map[string]any{"sha": p.BaseSHA, "ref": "main", "repo": repo(p.Owner, p.Repo, p.BaseCloneURL)},
		"head":     map[string]any{"sha": p.HeadSHA, "ref": "topic", "repo": repo(headOwner, p.Repo, p.HeadCloneURL)},
	}
	if merged {
		out["merged_at"] = closedAt
	}
	return out
}

func (s *Server) getPR(w http.ResponseWriter, r *http.Request) {
	if p := s.pr(w, r); p != nil {
		s.mu.Lock()
		out := s.prJSON(p)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, out)
	}
}

func (s *Server) listPRs(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var out []map[string]any
	for _, p := range s.prs {
		if p.Owner == r.PathValue("owner") && p.Repo == r.PathValue("repo") {
			out = append(out, s.prJSON(p))
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) listOrgRepos(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	seen := map[string]bool{}
	out := []map[string]any{}
	for _, p := range s.prs {
		if p.Owner == r.PathValue("org") && !seen[p.Repo] {
			seen[p.Repo] = true
			out = append(out, map[string]any{"name": p.Repo, "full_name": p.Owner + "/" + p.Repo, "clone_url": p.BaseCloneURL, "owner": map[string]any{"login": p.Owner}})
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) listFiles(w http.ResponseWriter, r *http.Request) {
	p := s.pr(w, r)
	if p == nil {
		return
	}
	out := []map[string]any{}
	for _, f := range p.Files {
		out = append(out, map[string]any{"filename": f.Path, "status": f.Status, "patch": f.Patch})
	}
	writeJSON(w, http.StatusOK, out)
}

// compare serves GET /compare/BASE...HEAD of a pull request's commits, as
// JSON (files) or, with Accept: application/vnd.github.patch, the patches.
func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	base, head, _ := strings.Cut(r.PathValue("spec"), "...")
	s.mu.Lock()
	var found *PR
	if files, ok := s.feedback.compares[compareKey(r.PathValue("owner"), r.PathValue("repo"), base, head)]; ok {
		found = &PR{Files: files}
	}
	for _, p := range s.prs {
		if found == nil && p.Owner == r.PathValue("owner") && p.Repo == r.PathValue("repo") && p.BaseSHA == base && p.HeadSHA == head {
			found = p
		}
	}
	s.mu.Unlock()
	if found == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	if strings.Contains(r.Header.Get("Accept"), "patch") || strings.Contains(r.Header.Get("Accept"), "diff") {
		w.Header().Set("Content-Type", "text/plain")
		for _, f := range found.Files {
			fmt.Fprintf(w, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n%s\n", f.Path, f.Path, f.Path, f.Path, strings.TrimRight(f.Patch, "\n"))
		}
		return
	}
	files := []map[string]any{}
	for _, f := range found.Files {
		files = append(files, map[string]any{"filename": f.Path, "status": f.Status, "patch": f.Patch})
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ahead", "files": files})
}

// limit answers a pending secondary rate limit.
func (s *Server) limit(w http.ResponseWriter) bool {
	s.mu.Lock()
	hit := s.limitOne
	if hit {
		s.limitOne = false
		s.limited++
	}
	s.mu.Unlock()
	if hit {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusForbidden, map[string]string{
			"message":           "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
			"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
		})
	}
	return hit
}

type draftComment struct {
	Path      string `json:"path"`
	Position  *int   `json:"position"`
	Body      string `json:"body"`
	Line      int    `json:"line"`
	StartLine int    `json:"start_line"`
	Side      string `json:"side"`
	StartSide string `json:"start_side"`
}

func (s *Server) createReview(w http.ResponseWriter, r *http.Request) {
	if s.limit(w) {
		return
	}
	p := s.pr(w, r)
	if p == nil {
		return
	}
	var req struct {
		CommitID string         `json:"commit_id"`
		Body     string         `json:"body"`
		Event    string         `json:"event"`
		Comments []draftComment `json:"comments"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
		return
	}
	reject := func(msg string) {
		s.mu.Lock()
		s.rejected++
		s.mu.Unlock()
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Unprocessable Entity", "errors": []string{msg}})
	}
	if req.CommitID != "" && req.CommitID != p.HeadSHA && len(req.Comments) > 0 {
		// GitHub resolves lines against that commit's diff; this fake
		// knows only the head's, and refuses rather than guess.
		reject("commit_id is not the head of the pull request: its lines cannot be checked")
		return
	}
	lines := Commentable(p.Files)
	for _, c := range req.Comments {
		if msg := check(lines, c); msg != "" {
			reject(msg)
			return
		}
	}
	author := s.login(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	commit := req.CommitID
	if commit == "" {
		commit = p.HeadSHA
	}
	rv := Review{ID: s.nextID, Number: p.Number, CommitID: commit, Body: req.Body, Event: req.Event, User: author}
	s.reviews = append(s.reviews, rv)
	for _, c := range req.Comments {
		s.nextID++
		side := c.Side
		if side == "" {
			side = "RIGHT"
		}
		s.comments = append(s.comments, Comment{ID: s.nextID, ReviewID: rv.ID, Number: p.Number, CommitID: p.HeadSHA,
			Path: c.Path, Line: c.Line, StartLine: c.StartLine, Side: side, Body: c.Body, User: author, CreatedAt: time.Now().UTC()})
	}
	writeJSON(w, http.StatusOK, reviewJSON(rv))
}

// check says why GitHub would refuse a comment ("" when it would not).
func check(lines map[string]map[int]int, c draftComment) string {
	if c.Position != nil {
		return "position is not supported by this fake: use line and side"
	}
	file, ok := lines[c.Path]
	if !ok {
		return fmt.Sprintf("Path %q is not part of the pull request", c.Path)
	}
	if c.Side == "LEFT" || c.StartSide == "LEFT" {
		return "Line could not be resolved: the LEFT side was not asked for"
	}
	hunk, ok := file[c.Line]
	if c.Line <= 0 || !ok {
		return fmt.Sprintf("Line %d of %s could not be resolved: it is not in the diff", c.Line, c.Path)
	}
	if c.StartLine != 0 {
		sh, ok := file[c.StartLine]
		if !ok || sh != hunk || c.StartLine > c.Line {
			return fmt.Sprintf("Start line %d of %s must be in the same hunk as line %d", c.StartLine, c.Path, c.Line)
		}
	}
	return ""
}

func reviewJSON(rv Review) map[string]any {
	return map[string]any{"id": rv.ID, "body": rv.Body, "commit_id": rv.CommitID, "state": "COMMENTED", "user": map[string]any{"login": rv.User}}
}

func (s *Server) updateReview(w http.ResponseWriter, r *http.Request) {
	if s.limit(w) {
		return
	}
	if p := s.pr(w, r); p == nil {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var req struct {
		Body string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
		return
	}
	author := s.login(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.reviews {
		if s.reviews[i].ID == id {
			if s.reviews[i].User != author {
				writeJSON(w, http.StatusForbidden, map[string]string{"message": "Resource not accessible: another user's review"})
				return
			}
			s.reviews[i].Body = req.Body
			writeJSON(w, http.StatusOK, reviewJSON(s.reviews[i]))
			return
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
}

func (s *Server) getReview(w http.ResponseWriter, r *http.Request) {
	if p := s.pr(w, r); p == nil {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rv := range s.reviews {
		if rv.ID == id {
			writeJSON(w, http.StatusOK, reviewJSON(rv))
			return
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
}

// DeleteReview removes a review and its comments, as a person deleting it
// on GitHub would.
func (s *Server) DeleteReview(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reviews = slices.DeleteFunc(s.reviews, func(r Review) bool { return r.ID == id })
	s.comments = slices.DeleteFunc(s.comments, func(c Comment) bool { return c.ReviewID == id })
}

func (s *Server) listReviews(w http.ResponseWriter, r *http.Request) {
	p := s.pr(w, r)
	if p == nil {
		return
	}
	out := []map[string]any{}
	for _, rv := range s.Reviews(p.Number) {
		out = append(out, reviewJSON(rv))
	}
	writeJSON(w, http.StatusOK, out)
}

// state serves every review and comment posted, for a person checking a
// trial by hand.
func (s *Server) state(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"reviews": s.reviews, "comments": s.comments, "rejected": s.rejected, "rate_limited": s.limited,
		"git": map[string]int{"served": s.git.served, "refused": s.git.refused}})
}

func (s *Server) listComments(w http.ResponseWriter, r *http.Request) {
	p := s.pr(w, r)
	if p == nil {
		return
	}
	out := []map[string]any{}
	comments := s.Comments(p.Number)
	s.mu.Lock()
	assoc := map[int64]string{}
	for _, c := range comments {
		assoc[c.ID] = s.association(c.User)
	}
	s.mu.Unlock()
	for _, c := range comments {
		out = append(out, map[string]any{"id": c.ID, "pull_request_review_id": c.ReviewID, "commit_id": c.CommitID,
			"html_url": fmt.Sprintf("%s/%s/%s/pull/%d#discussion_r%d", s.URL, r.PathValue("owner"), r.PathValue("repo"), c.Number, c.ID),
			"path":     c.Path, "line": c.Line, "start_line": c.StartLine, "side": c.Side, "body": c.Body, "user": map[string]any{"login": c.User},
			"in_reply_to_id": c.InReplyTo, "created_at": c.CreatedAt.UTC().Format(time.RFC3339), "author_association": assoc[c.ID]})
	}
	writeJSON(w, http.StatusOK, out)
}
