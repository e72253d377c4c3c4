package githubfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Reaction is a person's reaction to a review comment.
type Reaction struct {
	ID        int64
	CommentID int64
	User      string
	Content   string // +1, -1, laugh, confused, heart, hooray, rocket, eyes
	CreatedAt time.Time
}

// IssueComment is a comment on a pull request's conversation.
type IssueComment struct {
	ID        int64
	Number    int
	User      string
	Body      string
	CreatedAt time.Time
}

type fate struct {
	merged bool
	at     time.Time
}

// feedbackState is what other people did on the fake: reactions, issue
// comments, merges, and comparisons between pushes.
type feedbackState struct {
	reactions     []Reaction
	issueComments []IssueComment
	fates         map[string]fate
	compares      map[string][]File
	outsiders     map[string]bool  // logins that may not write to the repositories
	resolved      map[int64]string // thread (its first comment) -> who resolved it
}

// ResolveThread resolves the review thread comment id opened, as login.
func (s *Server) ResolveThread(commentID int64, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.feedback.resolved == nil {
		s.feedback.resolved = map[int64]string{}
	}
	s.feedback.resolved[commentID] = login
}

// graphql answers the one GraphQL query the fleet asks, a pull request's
// review threads (from its variables; the query text is not parsed): one
// thread per comment that is not a reply, in one page.
func (s *Server) graphql(w http.ResponseWriter, r *http.Request) {
	if !s.authorize(w, r, false) {
		return
	}
	var req struct {
		Variables struct {
			Owner  string `json:"owner"`
			Name   string `json:"name"`
			Number int    `json:"number"`
		} `json:"variables"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
		return
	}
	s.mu.Lock()
	p := s.prs[key(req.Variables.Owner, req.Variables.Name, req.Variables.Number)]
	nodes := []map[string]any{}
	for _, c := range s.comments {
		if p == nil || c.Number != p.Number || c.InReplyTo != 0 {
			continue
		}
		by, ok := s.feedback.resolved[c.ID]
		var resolvedBy any
		if ok {
			resolvedBy = map[string]any{"login": by}
		}
		nodes = append(nodes, map[string]any{"isResolved": ok, "resolvedBy": resolvedBy,
			"comments": map[string]any{"nodes": []map[string]any{{"databaseId": c.ID}}}})
	}
	s.mu.Unlock()
	if p == nil {
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"repository": nil},
			"errors": []map[string]any{{"message": "Could not resolve to a Repository"}}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"repository": map[string]any{"pullRequest": map[string]any{
		"reviewThreads": map[string]any{"pageInfo": map[string]any{"hasNextPage": false, "endCursor": ""}, "nodes": nodes}}}}})
}

// Outsider makes login someone who may not write to the repositories: its
// comments' author_association is CONTRIBUTOR and the collaborator look-up
// answers 404. Everyone else is a collaborator.
func (s *Server) Outsider(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.feedback.outsiders == nil {
		s.feedback.outsiders = map[string]bool{}
	}
	s.feedback.outsiders[strings.ToLower(login)] = true
}

// association is login's author_association (s.mu held).
func (s *Server) association(login string) string {
	if s.feedback.outsiders[strings.ToLower(login)] {
		return "CONTRIBUTOR"
	}
	return "COLLABORATOR"
}

func (s *Server) collaborator(w http.ResponseWriter, r *http.Request) {
	if !s.authorize(w, r, false) {
		return
	}
	s.mu.Lock()
	out := s.feedback.outsiders[strings.ToLower(r.PathValue("user"))]
	s.mu.Unlock()
	if out {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func compareKey(owner, repo, base, head string) string {
	return owner + "/" + repo + "@" + base + "..." + head
}

// React adds login's reaction (content: +1, -1, heart, …) to review
// comment id, as a person reacting on GitHub would; it returns the
// reaction's id.
func (s *Server) React(commentID int64, login, content string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.feedback.reactions = append(s.feedback.reactions, Reaction{ID: s.nextID, CommentID: commentID, User: login,
		Content: content, CreatedAt: time.Now().UTC()})
	return s.nextID
}

// Reply answers review comment id in its thread as login; it returns the
// reply's id. It panics when the comment does not exist (a test's
// mistake).
func (s *Server) Reply(commentID int64, login, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.comments {
		if c.ID == commentID {
			s.nextID++
			s.comments = append(s.comments, Comment{ID: s.nextID, ReviewID: c.ReviewID, Number: c.Number, CommitID: c.CommitID,
				Path: c.Path, Line: c.Line, Side: c.Side, Body: body, User: login, InReplyTo: c.ID, CreatedAt: time.Now().UTC()})
			return s.nextID
		}
	}
	panic(fmt.Sprintf("githubfake: no comment %d to reply to", commentID))
}

// CommentOnPR adds login's comment to pull request n's conversation.
func (s *Server) CommentOnPR(n int, login, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.feedback.issueComments = append(s.feedback.issueComments, IssueComment{ID: s.nextID, Number: n, User: login, Body: body, CreatedAt: time.Now().UTC()})
	return s.nextID
}

// Merge merges pull request owner/repo#n at its current head (CloseUnmerged closes
// it without merging).
func (s *Server) Merge(owner, repo string, n int) { s.setFate(owner, repo, n, true) }

// CloseUnmerged closes pull request owner/repo#n without merging it.
func (s *Server) CloseUnmerged(owner, repo string, n int) { s.setFate(owner, repo, n, false) }

func (s *Server) setFate(owner, repo string, n int, merged bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.feedback.fates == nil {
		s.feedback.fates = map[string]fate{}
	}
	s.feedback.fates[key(owner, repo, n)] = fate{merged: merged, at: time.Now().UTC()}
}

// SetCompare makes GET /compare/BASE...HEAD of owner/repo answer with
// files: what changed between two pushes of a pull request.
func (s *Server) SetCompare(owner, repo, base, head string, files []File) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.feedback.compares == nil {
		s.feedback.compares = map[string][]File{}
	}
	s.feedback.compares[compareKey(owner, repo, base, head)] = files
}

// ReactionCalls counts the reaction listings served (a sync's cost).
func (s *Server) ReactionCalls() int { s.mu.Lock(); defer s.mu.Unlock(); return s.reactionCalls }

// reactionsPath is GET /repos/OWNER/REPO/pulls/comments/ID/reactions, a
// route the mux cannot hold beside /pulls/{n}/reviews/{id}.
var reactionsPath = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/comments/(\d+)/reactions$`)

// serveReactions answers the reactions route, reporting whether it did.
func (s *Server) serveReactions(w http.ResponseWriter, r *http.Request) bool {
	m := reactionsPath.FindStringSubmatch(r.URL.Path)
	if m == nil || r.Method != http.MethodGet {
		return false
	}
	r.SetPathValue("owner", m[1])
	r.SetPathValue("repo", m[2])
	r.SetPathValue("id", m[3])
	s.listReactions(w, r)
	return true
}

func (s *Server) listReactions(w http.ResponseWriter, r *http.Request) {
	if !s.authorize(w, r, false) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reactionCalls++
	out := []map[string]any{}
	for _, re := range s.feedback.reactions {
		if re.CommentID == id {
			out = append(out, map[string]any{"id": re.ID, "content": re.Content, "user": map[string]any{"login": re.User},
				"created_at": re.CreatedAt.Format(time.RFC3339)})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) listIssueComments(w http.ResponseWriter, r *http.Request) {
	p := s.pr(w, r)
	if p == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, c := range s.feedback.issueComments {
		if c.Number == p.Number {
			out = append(out, map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"login": c.User},
				"created_at": c.CreatedAt.Format(time.RFC3339)})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// EditComment replaces a comment's body, as its author editing it would.
func (s *Server) EditComment(id int64, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.comments {
		if s.comments[i].ID == id {
			s.comments[i].Body = body
		}
	}
}
