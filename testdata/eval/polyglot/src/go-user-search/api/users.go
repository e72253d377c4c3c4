package api

import (
	"database/sql"
	"encoding/json"
	"net/http"

	"example.com/userdir/store"
)

// Handler serves the user directory.
type Handler struct {
	DB *sql.DB
}

// Get returns one user by id.
func (h *Handler) Get(w http.ResponseWriter, r *http.Request) {
	u, err := store.ByID(h.DB, r.URL.Query().Get("id"))
	if err != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	writeJSON(w, u)
}

// Search returns the first user whose name matches the query.
func (h *Handler) Search(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if len(name) > 200 {
		http.Error(w, "name too long", http.StatusBadRequest)
		return
	}
	users, err := store.FindByName(h.DB, name)
	if err != nil {
		http.Error(w, "lookup failed", http.StatusInternalServerError)
		return
	}
	first := users[0]
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, first)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
