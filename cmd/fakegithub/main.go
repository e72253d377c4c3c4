// Command fakegithub serves a fake GitHub API with one pull request made
// from a local git repository, for trying `reviewfleet review --pr … --post`
// and `reviewfleet serve` without GitHub. It refuses review comments
// outside the diff as GitHub does; GET /_fake/state shows what was posted.
//
//	fakegithub -repo DIR -base main -head topic -pr acme/api#1
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/reviewfleet/reviewfleet/internal/githubfake"
	"github.com/reviewfleet/reviewfleet/internal/gitsrc"
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
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *repo == "" || *base == "" || *head == "" {
		return errors.New("give -repo, -base and -head")
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
	srv := githubfake.New(githubfake.PR{Owner: owner, Repo: repoName, Number: n, Title: *title, Draft: *draft,
		BaseSHA: baseSHA, HeadSHA: headSHA, BaseCloneURL: "file://" + dir, HeadCloneURL: "file://" + dir, Files: files})
	defer srv.Close()
	if *rateLimit {
		srv.RateLimitOnce()
	}
	fmt.Fprintf(stdout, "fakegithub: serving %s/%s#%d (%d files, %s..%s); set GITHUB_API_URL=%s/ and review https://github.com/%s/%s/pull/%d\n",
		owner, repoName, n, len(files), baseSHA[:12], headSHA[:12], srv.URL, owner, repoName, n)
	<-ctx.Done()
	return nil
}
