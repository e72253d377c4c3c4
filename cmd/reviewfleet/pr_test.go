package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/githubfake"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

// prRepo makes a repository whose topic branch adds two lines the
// markers reviewer flags.
func prRepo(t *testing.T) (dir, base, head string) {
	t.Helper()
	dir = t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(text string) {
		if err := os.WriteFile(filepath.Join(dir, "calc.go"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("package calc\n\n// Div divides.\nfunc Div(a, b int) int {\n\treturn a / b\n}\n")
	git("add", ".")
	git("commit", "-qm", "base")
	write("package calc\n\n// Div divides.\nfunc Div(a, b int) int {\n\treturn a / b // BUG: division by zero\n}\n\n// Mod takes the remainder.\nfunc Mod(a, b int) int {\n\treturn a % b // BUG: modulo by zero\n}\n")
	git("commit", "-qam", "Add Mod")
	return dir, git("rev-parse", "HEAD~1"), git("rev-parse", "HEAD")
}

func TestReviewPullRequestAndPostTwice(t *testing.T) {
	t.Parallel()
	dir, base, head := prRepo(t)
	files, err := githubfake.FilesFromGit(context.Background(), dir, base, head)
	if err != nil {
		t.Fatal(err)
	}
	// A pull request's clone URL is remote: the repository is served over
	// http on the loopback interface, which the configuration allows.
	gitHost := githubfake.New()
	defer gitHost.Close()
	cloneURL, err := gitHost.ServePublicGit("acme", "calc", filepath.Join(dir, ".git"))
	if err != nil {
		t.Skip(err)
	}
	gh := githubfake.New(githubfake.PR{Owner: "acme", Repo: "calc", Number: 5, Title: "Add Mod", BaseSHA: base, HeadSHA: head,
		BaseCloneURL: cloneURL, HeadCloneURL: cloneURL, Files: files})
	defer gh.Close()
	gh.RateLimitOnce()
	llm := llmfake.New(llmfake.Markers(llmfake.DefaultMarker))
	defer llm.Close()
	env := testEnv{
		"DATABASE_URL": testenv.IsolatedSchema(t), "OPENAI_BASE_URL": llm.URL, "OPENAI_API_KEY": "k",
		"GITHUB_API_URL": gh.URL + "/", "GITHUB_TOKEN": "", "REVIEWFLEET_EXPERT_SNAPSHOT_DIR": t.TempDir(),
		"REVIEWFLEET_GITHUB_MAX_RETRY_WAIT": "2s", "REVIEWFLEET_SNAPSHOT_ALLOW_LOOPBACK_HTTP": "true",
	}
	if _, _, err := runEnv(t, env, "migrate"); err != nil {
		t.Fatal(err)
	}
	url := "https://github.com/acme/calc/pull/5"
	for i, want := range []string{"posted GitHub review", "updated GitHub review"} {
		out, stderr, err := runEnv(t, env, "review", "--pr", url, "--post", "--quiet")
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, stderr)
		}
		if !strings.Contains(stderr, want) || !strings.Contains(out, head[:12]) {
			t.Fatalf("run %d: stderr lacks %q:\n%s", i+1, want, stderr)
		}
	}
	reviews, comments := gh.Reviews(5), gh.Comments(5)
	if len(reviews) != 1 || len(comments) != 2 || gh.Rejected() != 0 || gh.Limited() != 1 {
		t.Fatalf("%d reviews, %d comments, %d refused, %d rate-limited; want 1, 2, 0, 1", len(reviews), len(comments), gh.Rejected(), gh.Limited())
	}
	lines := githubfake.Commentable(files)
	for _, c := range comments {
		if _, ok := lines[c.Path][c.Line]; !ok {
			t.Errorf("comment on %s:%d outside the diff", c.Path, c.Line)
		}
	}
	if _, _, err := runEnv(t, env, "review", "--pr", url, "--repo", dir); err == nil || !strings.Contains(err.Error(), "--pr takes") {
		t.Fatalf("--pr with --repo: %v", err)
	}
	if _, _, err := runEnv(t, env, "review", "--post", "--repo", dir, "--base", base, "--head", head); err == nil || !strings.Contains(err.Error(), "--post needs --pr") {
		t.Fatalf("--post without --pr: %v", err)
	}
}
