package submit

import (
	"context"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
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
			"main.go": "package main\n\nconst awsAccessKeyID = \"" + awsID + "\"\nconst awsSecretAccessKey = \"" + awsKey + "\"\n\nfunc main() {}\n",
			".env":    "DB_HOST=db\nDB_PASSWORD=" + dbPass + "\nGITHUB_TOKEN=" + ghp + "\n",
		})
	nr, err := Prepare(context.Background(), config.Default(), Request{Repo: repo, Base: "HEAD~1", Head: "HEAD", Purpose: "rotate " + ghp})
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
	if !strings.Contains(fs[".env"].Diff, "+GITHUB_TOKEN=[REDACTED:github-token:1]") || nr.Purpose != "rotate [REDACTED:github-token:1]" {
		t.Errorf("github token markers differ:\n%s\n%s", fs[".env"].Diff, nr.Purpose)
	}
}
