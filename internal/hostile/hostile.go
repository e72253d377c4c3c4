// Package hostile loads the corpus of hostile inputs under testdata/hostile
// for the tests that run it: malformed and truncated diffs, binary and huge
// files, odd encodings and paths, git objects that are not code, refs that do
// not exist. Each case is a directory holding a case.json (what to review and
// the outcome expected) and either a diff file or a setup.sh that builds the
// input — a repository, or a file too large to commit — at test time.
package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/submit"
)

// Outcomes a case can expect.
const (
	// ExpectError: submission is refused with an error containing every
	// Contains string.
	ExpectError = "error"
	// ExpectDone: the review is accepted and ends done.
	ExpectDone = "done"
)

// Case is one hostile input and the outcome it must have.
type Case struct {
	// Name is the case's directory name.
	Name string `json:"-"`
	// Dir is the case's directory.
	Dir string `json:"-"`
	// About says what the case is.
	About string `json:"about"`
	// Diff is a diff file to review with --diff, relative to the work
	// directory (where the case's files are copied and setup.sh runs)
	// unless absolute.
	Diff string `json:"diff,omitempty"`
	// Repo is the repository, relative to the work directory; with Diff it
	// is where contents are read from. An absolute path or a URL is kept
	// as is.
	Repo string `json:"repo,omitempty"`
	// Base and Head are the revisions reviewed in Repo.
	Base string `json:"base,omitempty"`
	Head string `json:"head,omitempty"`
	// Expect is ExpectError or ExpectDone.
	Expect string `json:"expect"`
	// Contains are substrings the error must carry (ExpectError).
	Contains []string `json:"contains,omitempty"`
	// Skipped maps paths to the reason they must be skipped with
	// (ExpectDone); Reviewed lists paths that must be reviewed.
	Skipped  map[string]string `json:"skipped,omitempty"`
	Reviewed []string          `json:"reviewed,omitempty"`
	// Findings are "path:line" locations the report must list when the
	// reviewer reports every line holding "BUG:" (llmfake.Markers).
	Findings []string `json:"findings,omitempty"`
	// ParseError, when set, is a substring of the *diff.ParseError the
	// diff must give; otherwise the diff must parse.
	ParseError string `json:"parse_error,omitempty"`
}

// Root returns the corpus directory from a package directory two levels
// below the repository (internal/x), where go test runs.
func Root() string { return filepath.Join("..", "..", "testdata", "hostile") }

// Load reads every case under root, sorted by name.
func Load(root string) ([]Case, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("read hostile corpus: %w", err)
	}
	var cases []Case
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		data, err := os.ReadFile(filepath.Join(dir, "case.json"))
		if err != nil {
			return nil, fmt.Errorf("hostile case %s: %w", e.Name(), err)
		}
		c := Case{Name: e.Name(), Dir: dir}
		if err := json.Unmarshal(data, &c); err != nil {
			return nil, fmt.Errorf("hostile case %s: case.json: %w", e.Name(), err)
		}
		if c.Expect != ExpectError && c.Expect != ExpectDone {
			return nil, fmt.Errorf("hostile case %s: expect %q is neither %q nor %q", e.Name(), c.Expect, ExpectError, ExpectDone)
		}
		if c.Diff == "" && c.Repo == "" {
			return nil, fmt.Errorf("hostile case %s: names neither a diff nor a repo", e.Name())
		}
		cases = append(cases, c)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	return cases, nil
}

// Materialize copies the case's files into work, runs its setup.sh there
// (with lib.sh of the corpus sourced first and git configured to ignore the
// user's settings) and returns the request to submit.
func (c Case) Materialize(ctx context.Context, work string) (submit.Request, error) {
	entries, err := os.ReadDir(c.Dir)
	if err != nil {
		return submit.Request{}, fmt.Errorf("materialize %s: %w", c.Name, err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(c.Dir, e.Name()))
		if err != nil {
			return submit.Request{}, fmt.Errorf("materialize %s: %w", c.Name, err)
		}
		if err := os.WriteFile(filepath.Join(work, e.Name()), data, 0o644); err != nil {
			return submit.Request{}, fmt.Errorf("materialize %s: %w", c.Name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "setup.sh")); err == nil {
		if err := c.setup(ctx, work); err != nil {
			return submit.Request{}, err
		}
	}
	req := submit.Request{Base: c.Base, Head: c.Head, CacheDir: filepath.Join(work, ".cache"), Origin: submit.FromOperator}
	if c.Diff != "" {
		req.DiffFile = c.Diff
		if !filepath.IsAbs(c.Diff) {
			req.DiffFile = filepath.Join(work, c.Diff)
		}
	}
	if c.Repo != "" {
		req.Repo = c.Repo
		if !filepath.IsAbs(c.Repo) && !submit.IsRemote(c.Repo) {
			req.Repo = filepath.Join(work, c.Repo)
		}
	}
	return req, nil
}

// setup runs setup.sh in work.
func (c Case) setup(ctx context.Context, work string) error {
	lib, err := filepath.Abs(filepath.Join(c.Dir, "..", "lib.sh"))
	if err != nil {
		return fmt.Errorf("setup %s: %w", c.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", `set -euo pipefail; source "$1"; source ./setup.sh`, "setup", lib)
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"HOME="+work, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=hostile", "GIT_AUTHOR_EMAIL=hostile@example.com",
		"GIT_COMMITTER_NAME=hostile", "GIT_COMMITTER_EMAIL=hostile@example.com",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
		"LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("setup %s: %w\n%s", c.Name, err, out)
	}
	return nil
}
