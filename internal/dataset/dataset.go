// Package dataset reads the evaluation dataset format: a directory of JSON
// cases, each a change (a diff, or a repository with base and head) with the
// issues known to be in it (golden issues). Decoding is strict, so a typo in
// a case is an error naming its file rather than a silently empty case. The
// evaluation matches reviews against these cases; the scripted reviewer of
// the fake model reads them to know what a competent reviewer would find.
package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// Case is one change of a dataset with its golden issues. Either Diff or
// both Base and Head say what to review.
type Case struct {
	// Name identifies the case in reports and stored results.
	Name string `json:"name"`
	// Repo is a local repository directory or a remote git URL; with Diff
	// a local directory is where file contents are read from, and a remote
	// URL is only a record of where the change comes from.
	Repo string `json:"repo,omitempty"`
	// Base and Head are revisions of Repo.
	Base string `json:"base,omitempty"`
	Head string `json:"head,omitempty"`
	// Diff is a unified diff file, relative to the case file.
	Diff string `json:"diff,omitempty"`
	// Purpose says what the change is for, as a pull request would.
	Purpose string `json:"purpose"`
	// Golden lists the issues a perfect review reports.
	Golden []Golden `json:"golden"`

	// File is the case file the case was read from.
	File string `json:"-"`
}

// Golden is one known issue of a case. An issue with File locates it by
// lines; one with only Text (an imported comment) can be matched by the
// judge alone.
type Golden struct {
	File      string `json:"file,omitempty"`
	StartLine int    `json:"start_line,omitempty"`
	EndLine   int    `json:"end_line,omitempty"`
	// Line is accepted for a one-line issue instead of StartLine/EndLine.
	Line     int    `json:"line,omitempty"`
	Text     string `json:"text"`
	Severity string `json:"severity,omitempty"`
	// RiskType labels the issue: one of reviewfleet's risk types (stored
	// in its canonical spelling) or any other label, kept as given.
	RiskType string `json:"risk_type,omitempty"`
	// Snippet is code found verbatim on one of the lines. Matching
	// does not use it; a scripted reviewer that knows the dataset searches
	// the repository for it.
	Snippet string `json:"snippet,omitempty"`
	// Related is code elsewhere in the repository that makes the issue
	// real (a helper the changed line calls), for the same reviewer.
	Related []Related `json:"related,omitempty"`
}

// Related is code an issue depends on outside its own lines: Snippet is
// found verbatim on one line of the definition of Symbol (when given).
type Related struct {
	Symbol  string `json:"symbol,omitempty"`
	Snippet string `json:"snippet"`
}

// Foreign reports whether the label is not one of reviewfleet's
// risk types: no finding ever carries it.
func (g Golden) Foreign() bool {
	if g.RiskType == "" {
		return false
	}
	_, err := review.ParseRiskType(g.RiskType)
	return err != nil
}

// DiffPath is the case's diff file resolved against the case file.
func (c Case) DiffPath() string {
	if c.Diff == "" || filepath.IsAbs(c.Diff) {
		return c.Diff
	}
	return filepath.Join(filepath.Dir(c.File), c.Diff)
}

// RepoPath is the case's repository, a local path resolved against the case
// file, or the URL as given.
func (c Case) RepoPath() string {
	if c.Repo == "" || IsRemote(c.Repo) || filepath.IsAbs(c.Repo) {
		return c.Repo
	}
	return filepath.Join(filepath.Dir(c.File), c.Repo)
}

// IsRemote reports whether repo names a remote repository rather than a
// directory.
func IsRemote(repo string) bool {
	return strings.Contains(repo, "://") || strings.HasPrefix(repo, "git@")
}

// LoadDataset reads every *.json file of dir as a case, in name order. Any
// unknown or missing field, or a duplicate case name, is an error naming
// the file.
func LoadDataset(dir string) ([]Case, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("list dataset %s: %w", dir, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("dataset %s holds no case (*.json) file", dir)
	}
	sort.Strings(paths)
	var cases []Case
	var errs []error
	names := map[string]string{}
	for _, p := range paths {
		c, err := LoadCase(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prev, ok := names[c.Name]; ok {
			errs = append(errs, fmt.Errorf("%s: case name %q is also used by %s", p, c.Name, prev))
			continue
		}
		names[c.Name] = p
		cases = append(cases, c)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cases, nil
}

// LoadCase reads and checks one case file.
func LoadCase(path string) (Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Case{}, fmt.Errorf("read case: %w", err)
	}
	c, err := DecodeCase(data)
	if err != nil {
		return Case{}, fmt.Errorf("%s: %w", path, err)
	}
	c.File = path
	if c.Diff != "" {
		if _, err := os.Stat(c.DiffPath()); err != nil {
			return Case{}, fmt.Errorf("%s: diff: %w", path, err)
		}
	}
	return c, nil
}

// DecodeCase decodes a case strictly: unknown fields, trailing data and
// missing required fields are errors. A golden issue's Line becomes its
// StartLine and EndLine.
func DecodeCase(data []byte) (Case, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Case
	if err := dec.Decode(&c); err != nil {
		return Case{}, fmt.Errorf("decode case: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Case{}, errors.New("decode case: data after the case object")
	}
	if err := c.check(); err != nil {
		return Case{}, err
	}
	return c, nil
}

func (c *Case) check() error {
	var errs []string
	if strings.TrimSpace(c.Name) == "" {
		errs = append(errs, `missing "name"`)
	}
	if strings.TrimSpace(c.Purpose) == "" {
		errs = append(errs, `missing "purpose"`)
	}
	switch {
	case c.Diff != "" && (c.Base != "" || c.Head != ""):
		errs = append(errs, `"diff" replaces "base" and "head": give one or the other`)
	case c.Diff == "" && (c.Base == "" || c.Head == ""):
		errs = append(errs, `missing "base" and "head" (or "diff")`)
	case c.Diff == "" && c.Repo == "":
		errs = append(errs, `missing "repo" (reviewing base..head needs a repository)`)
	}
	if c.Golden == nil {
		errs = append(errs, `missing "golden" (use [] for a change with no issue)`)
	}
	for i := range c.Golden {
		if err := c.Golden[i].normalise(); err != nil {
			errs = append(errs, fmt.Sprintf("golden[%d]: %v", i, err))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

func (g *Golden) normalise() error {
	if strings.TrimSpace(g.Text) == "" {
		return errors.New(`missing "text"`)
	}
	g.RiskType = strings.TrimSpace(g.RiskType)
	if rt, err := review.ParseRiskType(g.RiskType); err == nil {
		g.RiskType = string(rt)
	}
	if strings.Contains(g.Snippet, "\n") {
		return errors.New(`"snippet" is one line's code`)
	}
	for i, r := range g.Related {
		if strings.TrimSpace(r.Snippet) == "" || strings.Contains(r.Snippet, "\n") {
			return fmt.Errorf(`related[%d]: "snippet" must be one line's code`, i)
		}
	}
	if g.Line != 0 {
		if g.StartLine != 0 || g.EndLine != 0 {
			return errors.New(`"line" replaces "start_line" and "end_line": give one or the other`)
		}
		g.StartLine, g.EndLine, g.Line = g.Line, g.Line, 0
	}
	if g.File == "" {
		if g.StartLine != 0 || g.EndLine != 0 {
			return errors.New(`lines without "file"`)
		}
		return nil // text only: the judge alone can match it
	}
	switch {
	case g.StartLine <= 0:
		return errors.New(`missing "start_line" (or "line"), a line number from 1`)
	case g.EndLine == 0:
		return errors.New(`missing "end_line" (or give "line" for a one-line issue)`)
	case g.EndLine < g.StartLine:
		return fmt.Errorf(`"end_line" %d is before "start_line" %d`, g.EndLine, g.StartLine)
	}
	return nil
}
