// Package demo holds the offline demonstration: a small sample repository
// whose last commit introduces a few defects, and a recorded LLM exchange
// for reviewing it, served by an OpenAI-compatible server on loopback so
// that the real client, the real queues and the real stages all run.
package demo

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

//go:embed sample
var sample embed.FS

// Repo is the sample repository written to disk.
type Repo struct {
	Dir        string
	Base, Head string // revisions to review
}

// WriteRepo creates the sample git repository in dir: a base commit and a
// head commit on top of it.
func WriteRepo(ctx context.Context, dir string) (Repo, error) {
	git := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "user.name=reviewfleet demo",
			"-c", "user.email=demo@reviewfleet.invalid", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_DATE=2026-01-05T10:00:00Z", "GIT_COMMITTER_DATE=2026-01-05T10:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := git("init", "-q"); err != nil {
		return Repo{}, err
	}
	for _, side := range []string{"base", "head"} {
		if err := writeTree(dir, "sample/"+side); err != nil {
			return Repo{}, err
		}
		msg := "Initial shop service"
		if side == "head" {
			msg = "Speed up user lookup, add cache janitor, simplify bearer parsing"
		}
		if err := git("add", "-A"); err != nil {
			return Repo{}, err
		}
		if err := git("commit", "-q", "-m", msg); err != nil {
			return Repo{}, err
		}
	}
	return Repo{Dir: dir, Base: "HEAD~1", Head: "HEAD"}, nil
}

// writeTree replaces dir's files (not .git) with the embedded tree root.
func writeTree(dir, root string) error {
	return fs.WalkDir(sample, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := sample.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(p, root+"/"), ".txt")
		dest := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dest, data, 0o644)
	})
}

// headFile returns the head version of a sample file.
func headFile(path string) string {
	data, err := sample.ReadFile("sample/head/" + path + ".txt")
	if err != nil {
		return ""
	}
	return string(data)
}

// lineOf returns the 1-based line of the first line containing match in
// the head version of path (0 when absent).
func lineOf(path, match string) int {
	for i, l := range strings.Split(headFile(path), "\n") {
		if strings.Contains(l, match) {
			return i + 1
		}
	}
	return 0
}
