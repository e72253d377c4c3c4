package main

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/reviewfleet/reviewfleet/internal/githubfake"
	"github.com/reviewfleet/reviewfleet/internal/gitsrc"
)

// pushes serves pull requests of the repository at revisions a person
// names, and remembers each one's heads so a merge can say what changed
// since every one of them.
type pushes struct {
	srv                    *githubfake.Server
	dir, owner, repo, base string
	cloneURL, title        string
	mu                     sync.Mutex
	heads                  map[int][]string
}

// push serves pull request ?number= at revision ?head= (base: the
// command's -base).
func (p *pushes) push(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.URL.Query().Get("number"))
	if err != nil || n <= 0 {
		http.Error(w, "want ?number=N&head=REV", http.StatusUnprocessableEntity)
		return
	}
	head, err := gitsrc.ResolveRev(r.Context(), p.dir, r.URL.Query().Get("head"))
	if err != nil {
		http.Error(w, "head: "+err.Error(), http.StatusUnprocessableEntity)
		return
	}
	files, err := githubfake.FilesFromGit(r.Context(), p.dir, p.base, head)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	p.srv.AddPR(githubfake.PR{Owner: p.owner, Repo: p.repo, Number: n, Title: p.title, BaseSHA: p.base, HeadSHA: head,
		BaseCloneURL: p.cloneURL, HeadCloneURL: p.cloneURL, Files: files})
	p.mu.Lock()
	p.heads[n] = append(p.heads[n], head)
	p.mu.Unlock()
	fmt.Fprintf(w, "serving %s/%s#%d at %s (%d files)\n", p.owner, p.repo, n, head, len(files))
}

// merge merges pull request ?number= at its last head, serving the
// comparison from each earlier head to it.
func (p *pushes) merge(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.URL.Query().Get("number"))
	p.mu.Lock()
	heads := append([]string(nil), p.heads[n]...)
	p.mu.Unlock()
	if len(heads) == 0 {
		http.Error(w, "no such pull request", http.StatusNotFound)
		return
	}
	last := heads[len(heads)-1]
	for _, h := range heads[:len(heads)-1] {
		files, err := githubfake.FilesFromGit(r.Context(), p.dir, h, last)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		p.srv.SetCompare(p.owner, p.repo, h, last, files)
	}
	p.srv.Merge(p.owner, p.repo, n)
	fmt.Fprintf(w, "merged %s/%s#%d at %s\n", p.owner, p.repo, n, last)
}
