package githubfake

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// gitRepos counts the fake's git requests.
type gitRepos struct {
	served  int
	refused int
}

// GitBackend is the path of git's smart-HTTP CGI program, git-http-backend.
func GitBackend() (string, error) {
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		return "", fmt.Errorf("find git's programs: %w", err)
	}
	p := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("git-http-backend: %w", err)
	}
	return p, nil
}

// ServeGit hosts the bare repository at dir as OWNER/REPO.git over git's
// smart HTTP protocol, as GitHub hosts a private repository, and returns
// its clone URL (the fake's URL + "/OWNER/REPO.git"). A fetch must
// authenticate with HTTP basic whose password is the App's installation
// token once RequireApp was called, else token; an empty token with no App
// serves the repository to anyone. Fetching only: pushes are refused.
func (s *Server) ServeGit(owner, repo, dir, token string) (string, error) {
	return s.serveGit(owner, repo, dir, false, token)
}

// ServePublicGit hosts the bare repository at dir as a public repository:
// anyone may fetch it, with or without credentials.
func (s *Server) ServePublicGit(owner, repo, dir string) (string, error) {
	return s.serveGit(owner, repo, dir, true, "")
}

func (s *Server) serveGit(owner, repo, dir string, public bool, token string) (string, error) {
	backend, err := GitBackend()
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	prefix := "/" + owner + "/" + repo + ".git"
	cgiHandler := &cgi.Handler{Path: backend, Root: prefix,
		Env: []string{"GIT_PROJECT_ROOT=" + abs, "GIT_HTTP_EXPORT_ALL=1"}}
	s.mux.HandleFunc(prefix+"/", func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "git-receive-pack") || r.URL.Query().Get("service") == "git-receive-pack" {
			http.Error(w, "the fake serves fetches only", http.StatusForbidden)
			return
		}
		if !public {
			if err := s.gitAuthorized(r, token); err != nil {
				s.mu.Lock()
				s.git.refused++
				s.mu.Unlock()
				w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
				http.Error(w, err.Error(), http.StatusUnauthorized)
				return
			}
		}
		s.mu.Lock()
		s.git.served++
		s.mu.Unlock()
		cgiHandler.ServeHTTP(w, r)
	})
	return s.URL + prefix, nil
}

// gitAuthorized checks a private repository's fetch: the App's
// installation token when an App is required, else token.
func (s *Server) gitAuthorized(r *http.Request, token string) error {
	s.mu.Lock()
	want := token
	if s.appKey != nil {
		want = InstallationToken
	}
	s.mu.Unlock()
	if want == "" {
		return nil
	}
	_, pass, ok := r.BasicAuth()
	switch {
	case !ok:
		return errors.New("authentication required: this repository is private")
	case pass != want:
		return errors.New("invalid username or token")
	}
	return nil
}

// GitRequests returns how many git requests were served and how many
// were refused for their credentials.
func (s *Server) GitRequests() (served, refused int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.git.served, s.git.refused
}
