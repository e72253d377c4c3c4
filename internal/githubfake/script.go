package githubfake

import (
	"net/http"
	"strconv"
)

// Handle serves extra routes beside the API's (a command's own).
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// scriptRoutes let a person act on the fake as other GitHub users would,
// with query parameters:
//
//	POST /_fake/react?comment_id=N&user=LOGIN&content=-1
//	POST /_fake/reply?comment_id=N&user=LOGIN&body=TEXT
//	POST /_fake/outsider?user=LOGIN
//	POST /_fake/resolve?comment_id=N&user=LOGIN   (resolve the comment's thread)
func (s *Server) scriptRoutes() {
	s.mux.HandleFunc("POST /_fake/react", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		id, _ := strconv.ParseInt(q.Get("comment_id"), 10, 64)
		if q.Get("content") == "" || q.Get("user") == "" || !s.hasComment(id) {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "want comment_id of a comment, user and content (+1, -1, …)"})
			return
		}
		writeJSON(w, http.StatusCreated, map[string]any{"id": s.React(id, q.Get("user"), q.Get("content"))})
	})
	s.mux.HandleFunc("POST /_fake/reply", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		id, _ := strconv.ParseInt(q.Get("comment_id"), 10, 64)
		if q.Get("user") == "" || !s.hasComment(id) {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "want comment_id of a comment, user and body"})
			return
		}
		writeJSON(w, http.StatusCreated, map[string]any{"id": s.Reply(id, q.Get("user"), q.Get("body"))})
	})
	s.mux.HandleFunc("POST /_fake/resolve", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		id, _ := strconv.ParseInt(q.Get("comment_id"), 10, 64)
		if q.Get("user") == "" || !s.hasComment(id) {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "want comment_id of a comment and user"})
			return
		}
		s.ResolveThread(id, q.Get("user"))
		w.WriteHeader(http.StatusNoContent)
	})
	s.mux.HandleFunc("POST /_fake/outsider", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("user") == "" {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "want user"})
			return
		}
		s.Outsider(r.URL.Query().Get("user"))
		w.WriteHeader(http.StatusNoContent)
	})
}

func (s *Server) hasComment(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.comments {
		if c.ID == id {
			return true
		}
	}
	return false
}
