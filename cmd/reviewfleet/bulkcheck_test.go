package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/bulk"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/githubfake"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

// bulk --check resolves every entry through the same client a submission
// uses and reports each bad one by its manifest line (comments and blank
// lines counted), with what to do about it; it submits nothing and needs
// no model endpoint.
func TestBulkCheckReportsEveryBadEntryByLine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testEnv{
		"DATABASE_URL": testenv.IsolatedSchema(t), "REDIS_URL": testenv.RedisURL(t),
		"REVIEWFLEET_EXPERT_SNAPSHOT_DIR": t.TempDir(), "REVIEWFLEET_SNAPSHOT_ALLOW_LOOPBACK_HTTP": "true",
	}
	if _, _, err := runEnv(t, env, "migrate"); err != nil {
		t.Fatal(err)
	}
	r, err := demo.WriteRepo(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gh := githubfake.New()
	defer gh.Close()
	u, err := gh.ServePublicGit("acme", "calc", filepath.Join(r.Dir, ".git"))
	if err != nil {
		t.Skip(err)
	}
	good := manifestLine(t, bulk.Entry{Repo: u, Base: r.Base, Head: r.Head})
	lines := []string{
		"# nightly batch", // line 1
		good,              // line 2
		"",                // line 3
		manifestLine(t, bulk.Entry{Repo: u, Base: r.Base, Head: "no-such-branch"}), // line 4
		`{"repo": "` + u + `", "base": "main"}`,                                    // line 5
		good,                                                                       // line 6
	}
	out, _, err := runEnv(t, env, "bulk", "--manifest", writeManifest(t, lines), "--check")
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 1 || !strings.Contains(err.Error(), "2 of 4 entries") {
		t.Fatalf("bulk --check: %v, want exit 1 for 2 of 4 entries\n%s", err, out)
	}
	t.Logf("bulk --check:\n%s", out)
	got := strings.Split(strings.TrimSpace(out), "\n")
	if len(got) != 2 || !strings.HasPrefix(got[0], "line 4: ") || !strings.HasPrefix(got[1], "line 5: malformed: missing head") {
		t.Fatalf("want lines 4 and 5 reported, in order:\n%s", out)
	}
	if !strings.Contains(got[0], `head "no-such-branch" is no branch`) || !strings.Contains(got[0], "remove the line") ||
		strings.Contains(out, "--diff") {
		t.Errorf("the missing branch's hint is not one a manifest can follow:\n%s", got[0])
	}
	if list, _, err := runEnv(t, env, "batch", "list"); err != nil || strings.Count(list, "\n") != 1 {
		t.Fatalf("bulk --check submitted something: %v\n%s", err, list)
	}

	out, _, err = runEnv(t, env, "bulk", "--manifest", writeManifest(t, []string{"# one entry", good}), "--check")
	if err != nil || !strings.Contains(out, "all 1 entries resolve; nothing was submitted") {
		t.Fatalf("bulk --check of a good manifest: %v\n%s", err, out)
	}
}
