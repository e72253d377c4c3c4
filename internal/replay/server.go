package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llm"
)

// ErrNotRecorded marks a request the recording has no reply for.
var ErrNotRecorded = errors.New("no recorded reply")

// Server is an OpenAI-compatible chat completion endpoint on loopback that
// answers every request with the recorded reply of the same prompt hash.
// When a hash was recorded several times, its replies come in recorded
// order, those of the request's own stage and item first. A request with
// no reply left gets a 400 naming its stage, item and hash, and is
// reported on Misses.
type Server struct {
	// URL is the base URL to configure the client with; it ends in "/v1".
	URL string

	srv    *http.Server
	ln     net.Listener
	served chan struct{}
	misses chan error

	mu      sync.Mutex
	pending map[string][]Exchange // by hash, in recorded order
	missed  error
}

// NewServer starts a server with no recording: give it one with Play.
func NewServer() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the replay server: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String() + "/v1", ln: ln, served: make(chan struct{}),
		misses: make(chan error, 1), pending: map[string][]Exchange{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Play makes the server answer from rec's exchanges (replacing any it had).
func (s *Server) Play(rec Recording) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = map[string][]Exchange{}
	for _, e := range rec.Exchanges {
		s.pending[e.Hash] = append(s.pending[e.Hash], e)
	}
}

// Misses delivers the first request the recording had no reply for.
func (s *Server) Misses() <-chan error { return s.misses }

// Missed returns the first request the recording had no reply for, or nil.
func (s *Server) Missed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.missed
}

// Close stops the server.
func (s *Server) Close() {
	_ = s.srv.Close()
	<-s.served
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "replay: read request body: "+err.Error())
		return
	}
	var req openai.ChatCompletionRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "replay: request body is not a chat completion request: "+err.Error())
		return
	}
	hash, err := llm.PromptHash(req)
	if err != nil {
		writeError(w, http.StatusBadRequest, "replay: "+err.Error())
		return
	}
	stage := r.Header.Get(llm.HeaderStage)
	item, _ := url.PathUnescape(r.Header.Get(llm.HeaderItem))
	reply, ok := s.take(hash, stage, item)
	if !ok {
		err := MissError{Stage: stage, Item: item, Hash: hash}
		s.miss(err)
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(reply)
}

// take removes and returns the next recorded reply for hash, preferring one
// recorded for the same stage and item.
func (s *Server) take(hash, stage, item string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	queue := s.pending[hash]
	if len(queue) == 0 {
		return nil, false
	}
	i := 0
	for j, e := range queue {
		if e.Stage == stage && e.Item == item {
			i = j
			break
		}
	}
	reply := queue[i].Reply
	s.pending[hash] = append(queue[:i:i], queue[i+1:]...)
	return reply, true
}

func (s *Server) miss(err error) {
	s.mu.Lock()
	first := s.missed == nil
	if first {
		s.missed = err
	}
	s.mu.Unlock()
	if first {
		s.misses <- err
	}
}

// MissError is a request the recording has no reply for.
type MissError struct {
	Stage, Item, Hash string
}

func (e MissError) Error() string {
	what := e.Stage
	if what == "" {
		what = "unknown stage"
	}
	if e.Item != "" {
		what += " item " + e.Item
	}
	return fmt.Sprintf("replay: no recorded reply for %s (request %.12s…): the review asks something the recorded one did not", what, e.Hash)
}

// Unwrap makes errors.Is(err, ErrNotRecorded) true.
func (e MissError) Unwrap() error { return ErrNotRecorded }

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": "not_recorded"}})
}
