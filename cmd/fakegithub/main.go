// Command fakegithub serves a fake GitHub API with one pull request made
// from a local git repository, for trying `reviewfleet review --pr … --post`
// and `reviewfleet serve` without GitHub. It refuses review comments
// outside the diff as GitHub does; GET /_fake/state shows what was posted.
// With -serve-git it also hosts the repository as a private one over https
// (-tls), so that clones need the token or the GitHub App's installation
// token (-app-key).
//
//	fakegithub -repo DIR -base main -head topic -pr acme/api#1
//	fakegithub -repo DIR -base main -head topic -tls -serve-git -app-key app.pem
//
// Other people's doings are scripted over HTTP: POST /_fake/push?number=N&head=REV
// serves pull request N (a new one, or a new push) at a revision of the
// repository; /_fake/react, /_fake/reply and /_fake/outsider act on
// comments (see package githubfake); /_fake/merge?number=N merges.
package main

import (
	"context"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/reviewfleet/reviewfleet/internal/githubfake"
	"github.com/reviewfleet/reviewfleet/internal/gitsrc"
	"github.com/reviewfleet/reviewfleet/internal/pullrequest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "fakegithub:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fakegithub", flag.ContinueOnError)
	fs.SetOutput(stderr)
	repo := fs.String("repo", "", "local git repository the pull request is made from (served as its clone URL)")
	base := fs.String("base", "", "base revision")
	head := fs.String("head", "", "head revision")
	pr := fs.String("pr", "acme/api#1", "the pull request: OWNER/REPO#N")
	title := fs.String("title", "A change", "the pull request's title")
	draft := fs.Bool("draft", false, "serve it as a draft")
	rateLimit := fs.Bool("rate-limit-once", false, "answer the first write with a secondary rate limit (403, Retry-After: 1)")
	useTLS := fs.Bool("tls", false, "serve https with a certificate of its own, written to -ca-file")
	caFile := fs.String("ca-file", filepath.Join(os.TempDir(), "fakegithub-ca.pem"), "with -tls: where to write the certificate to trust (SSL_CERT_FILE, GIT_SSL_CAINFO)")
	serveGit := fs.Bool("serve-git", false, "host the repository as a private one at URL/OWNER/REPO.git (the pull request's clone URL) instead of a file:// URL")
	gitToken := fs.String("git-token", "", "with -serve-git and no -app-key: the token a clone must present (empty: anyone may clone)")
	appKey := fs.String("app-key", "", "act as GitHub for the GitHub App whose private key is this PEM file: App endpoints need its JWT, the rest its installation token")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *repo == "" || *base == "" || *head == "" {
		return errors.New("give -repo, -base and -head")
	}
	if *serveGit && !*useTLS && (*gitToken != "" || *appKey != "") {
		return errors.New("-serve-git with credentials needs -tls: reviewfleet sends git credentials over https only")
	}
	name, num, ok := strings.Cut(*pr, "#")
	owner, repoName, ok2 := strings.Cut(name, "/")
	n, err := strconv.Atoi(num)
	if !ok || !ok2 || err != nil {
		return fmt.Errorf("-pr %q: want OWNER/REPO#N", *pr)
	}
	dir, err := filepath.Abs(*repo)
	if err != nil {
		return err
	}
	baseSHA, err := gitsrc.ResolveRev(ctx, dir, *base)
	if err != nil {
		return fmt.Errorf("-base: %w", err)
	}
	headSHA, err := gitsrc.ResolveRev(ctx, dir, *head)
	if err != nil {
		return fmt.Errorf("-head: %w", err)
	}
	files, err := githubfake.FilesFromGit(ctx, dir, baseSHA, headSHA)
	if err != nil {
		return err
	}
	srv := githubfake.New()
	if *useTLS {
		srv = githubfake.NewTLS()
	}
	defer srv.Close()
	if *appKey != "" {
		pemBytes, err := os.ReadFile(*appKey)
		if err != nil {
			return fmt.Errorf("-app-key: %w", err)
		}
		key, err := pullrequest.ParsePrivateKey(pemBytes)
		if err != nil {
			return fmt.Errorf("-app-key: %w", err)
		}
		srv.RequireApp(&key.PublicKey)
	}
	cloneURL := "file://" + dir
	if *serveGit {
		bare, err := os.MkdirTemp("", "fakegithub-git-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(bare)
		if err := hostRepo(ctx, dir, bare, n, baseSHA, headSHA); err != nil {
			return err
		}
		if cloneURL, err = srv.ServeGit(owner, repoName, bare, *gitToken); err != nil {
			return err
		}
	}
	srv.AddPR(githubfake.PR{Owner: owner, Repo: repoName, Number: n, Title: *title, Draft: *draft,
		BaseSHA: baseSHA, HeadSHA: headSHA, BaseCloneURL: cloneURL, HeadCloneURL: cloneURL, Files: files})
	if *rateLimit {
		srv.RateLimitOnce()
	}
	pushes := &pushes{srv: srv, dir: dir, owner: owner, repo: repoName, base: baseSHA, cloneURL: cloneURL, title: *title,
		heads: map[int][]string{n: {headSHA}}}
	srv.Handle("POST /_fake/push", http.HandlerFunc(pushes.push))
	srv.Handle("POST /_fake/merge", http.HandlerFunc(pushes.merge))
	fmt.Fprintf(stdout, "fakegithub: serving %s/%s#%d (%d files, %s..%s, cloned from %s); set GITHUB_API_URL=%s/ and review https://github.com/%s/%s/pull/%d\n",
		owner, repoName, n, len(files), baseSHA[:12], headSHA[:12], cloneURL, srv.URL, owner, repoName, n)
	if *useTLS {
		cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
		if err := os.WriteFile(*caFile, cert, 0o644); err != nil {
			return fmt.Errorf("-ca-file: %w", err)
		}
		fmt.Fprintf(stdout, "fakegithub: trust its certificate with SSL_CERT_FILE=%s GIT_SSL_CAINFO=%s\n", *caFile, *caFile)
	}
	<-ctx.Done()
	return nil
}
