package submit

import (
	"context"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/diff"
)

// TestPrepareRedacts checks that a prepared review holds no secret in its
// contents, diffs or purpose, that the marker sits on the secret's line,
// and that one value has one marker in the diff and the content.
func TestPrepareRedacts(t *testing.T) {
	const (
		awsID  = "AKIA5XRILAV5FVCYK43K"
		awsKey = "JRfza0hW/rdE2oapzzQbkrck+z1iYylswfgItIep"
		ghp    = "ghp_3Tz85pkNGcVx2RHLKXSf3wh34LxCnzm8KVby"
		dbPass = "3JVkHQ2w81rmkRvQ"
	)
	repo := gitRepo(t,
		map[string]string{"main.go": "package main\n\nfunc main() {}\n"},
		map[string]string{
			"main.go":       "package main\n\nconst awsAccessKeyID = \"" + awsID + "\"\nconst awsSecretAccessKey = \"" + awsKey + "\"\n\nfunc main() {}\n",
			"deploy/app.sh": "DB_HOST=db\nDB_PASSWORD=" + dbPass + "\nGITHUB_TOKEN=" + ghp + "\n",
			".env":          "DB_PASSWORD=" + dbPass + "\n",
		})
	nr, err := Prepare(context.Background(), config.Default(), Request{Origin: FromOperator, Repo: repo, Base: "HEAD~1", Head: "HEAD", Purpose: "rotate " + ghp})
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	all.WriteString(nr.Purpose)
	for _, f := range nr.Files {
		all.WriteString(f.Diff)
		if f.Content != nil {
			all.WriteString(*f.Content)
		}
	}
	for _, v := range []string{awsID, awsKey, ghp, dbPass} {
		if strings.Contains(all.String(), v) {
			t.Errorf("secret %s is in the prepared review", v)
		}
	}
	fs := files(nr)
	lines := strings.Split(*fs["main.go"].Content, "\n")
	if lines[2] != `const awsAccessKeyID = "[REDACTED:aws-access-key-id:1]"` || lines[3] != `const awsSecretAccessKey = "[REDACTED:aws-secret:1]"` {
		t.Errorf("markers not on lines 3-4:\n%s", *fs["main.go"].Content)
	}
	if !strings.Contains(fs["main.go"].Diff, `+const awsSecretAccessKey = "[REDACTED:aws-secret:1]"`) {
		t.Errorf("diff marker differs from content marker:\n%s", fs["main.go"].Diff)
	}
	if !strings.Contains(fs["deploy/app.sh"].Diff, "+GITHUB_TOKEN=[REDACTED:github-token:1]") || nr.Purpose != "rotate [REDACTED:github-token:1]" {
		t.Errorf("github token markers differ:\n%s\n%s", fs["deploy/app.sh"].Diff, nr.Purpose)
	}
	if env := fs[".env"]; env.SkipReason != diff.ReasonDenied || env.Diff != "" || env.Content != nil {
		t.Errorf(".env: skip %q, diff %q, content %v; want denied with nothing stored", env.SkipReason, env.Diff, env.Content)
	}
}

// TestPrepareRedactsNames checks that a token in a file name or a branch
// name is stored as its marker, the same as in the content, and that such
// a file is listed as not reviewed.
func TestPrepareRedactsNames(t *testing.T) {
	const (
		ghp  = "ghp_8mQ2vX7tL4pR9sK1wN3yB6cF0hJ5dG2aE8uZ"
		live = "sk_live_7Hq3Vm9Lx2Tp8Rk4Wn6Yb1Cf"
	)
	repo := gitRepo(t,
		map[string]string{"main.go": "package main\n"},
		map[string]string{"main.go": "package main\n\nconst t = \"" + ghp + "\"\n", "keys/" + ghp + ".txt": "hello\n"})
	git(t, repo, "branch", "feat-"+live)
	nr, err := Prepare(context.Background(), config.Default(), Request{Origin: FromOperator, Repo: repo, Base: "HEAD~1", Head: "feat-" + live})
	if err != nil {
		t.Fatal(err)
	}
	fs := files(nr)
	named, ok := fs["keys/[REDACTED:github-token:1].txt"]
	if !ok {
		t.Fatalf("no file under the redacted name: %v", fs)
	}
	if named.SkipReason != ReasonSecretName || named.Diff != "" || named.Content != nil {
		t.Errorf("secret-named file: skip %q, diff %q", named.SkipReason, named.Diff)
	}
	if !strings.Contains(*fs["main.go"].Content, "[REDACTED:github-token:1]") {
		t.Errorf("content marker differs from the name's:\n%s", *fs["main.go"].Content)
	}
	if strings.Contains(nr.HeadRef, live) || !strings.HasPrefix(nr.HeadRef, "feat-[REDACTED:") {
		t.Errorf("head ref stored as %q", nr.HeadRef)
	}
	for _, f := range nr.Files {
		if strings.Contains(f.Path, ghp) || strings.Contains(f.Diff, ghp) {
			t.Errorf("raw token in %s", f.Path)
		}
	}
}
