package evaluation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/go-github/v84/github"
)

// BenchmarkPR is one pull request of the public code-review benchmark's
// golden-comment files: [{"pr_title", "url", "comments": [{"comment",
// "severity"}]}].
type BenchmarkPR struct {
	Title    string             `json:"pr_title"`
	URL      string             `json:"url"`
	Comments []BenchmarkComment `json:"comments"`
}

// BenchmarkComment is one golden review comment: text only, no location.
type BenchmarkComment struct {
	Comment  string `json:"comment"`
	Severity string `json:"severity"`
}

// ParseBenchmark reads a golden-comment file. Unknown fields are errors,
// so a file of another shape is not silently imported empty.
func ParseBenchmark(r io.Reader) ([]BenchmarkPR, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var prs []BenchmarkPR
	if err := dec.Decode(&prs); err != nil {
		return nil, fmt.Errorf("decode golden comments: %w", err)
	}
	for i, p := range prs {
		if p.URL == "" {
			return nil, fmt.Errorf("golden comments entry %d (%q): missing \"url\"", i, p.Title)
		}
		if _, _, _, err := ParsePullURL(p.URL); err != nil {
			return nil, fmt.Errorf("golden comments entry %d: %w", i, err)
		}
	}
	return prs, nil
}

var pullPath = regexp.MustCompile(`^/([^/]+)/([^/]+)/pull/(\d+)/?$`)

// ParsePullURL reads owner, repository and number from a pull request's web
// address (https://HOST/OWNER/REPO/pull/N).
func ParsePullURL(raw string) (owner, repo string, number int, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", 0, fmt.Errorf("pull request url %q: %w", raw, err)
	}
	m := pullPath.FindStringSubmatch(u.Path)
	if m == nil {
		return "", "", 0, fmt.Errorf("pull request url %q: want https://HOST/OWNER/REPO/pull/NUMBER", raw)
	}
	n, _ := strconv.Atoi(m[3])
	return m[1], m[2], n, nil
}

// Imported is one case the importer wrote.
type Imported struct {
	Case      string
	CaseFile  string
	PatchFile string
	Golden    int
}

// Import fetches each pull request's diff through client and writes one
// case file and one .patch file per pull request into dir. The golden
// comments become golden issues with text (and the benchmark's severity, as
// written) only: they name no file or line, so only the judge can match
// them. The case reviews the
// patch; its repo is the pull request's clone URL, a record of where the
// change comes from, and its purpose the title and description.
func Import(ctx context.Context, client *github.Client, prs []BenchmarkPR, dir string) ([]Imported, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	var out []Imported
	names := map[string]bool{}
	for _, p := range prs {
		owner, repo, n, err := ParsePullURL(p.URL)
		if err != nil {
			return out, err
		}
		pr, _, err := client.PullRequests.Get(ctx, owner, repo, n)
		if err != nil {
			return out, fmt.Errorf("fetch pull request %s: %w", p.URL, err)
		}
		diff, _, err := client.PullRequests.GetRaw(ctx, owner, repo, n, github.RawOptions{Type: github.Diff})
		if err != nil {
			return out, fmt.Errorf("fetch the diff of %s: %w", p.URL, err)
		}
		if strings.TrimSpace(diff) == "" {
			return out, fmt.Errorf("the diff of %s is empty", p.URL)
		}
		name := caseName(owner, repo, n)
		if names[name] {
			return out, fmt.Errorf("pull request %s is listed twice", p.URL)
		}
		names[name] = true
		purpose := strings.TrimSpace(p.Title)
		if purpose == "" {
			purpose = pr.GetTitle()
		}
		if body := strings.TrimSpace(pr.GetBody()); body != "" {
			purpose += "\n\n" + body
		}
		if purpose == "" {
			purpose = p.URL
		}
		c := Case{
			Name: name, Repo: pr.GetBase().GetRepo().GetCloneURL(), Diff: name + ".patch", Purpose: purpose,
			Golden: make([]Golden, 0, len(p.Comments)),
		}
		for i, cm := range p.Comments {
			if strings.TrimSpace(cm.Comment) == "" {
				return out, fmt.Errorf("%s: comment %d is empty", p.URL, i)
			}
			// The benchmark's own severity, as it spells it: eval reports
			// per label as given and never ranks by severity.
			c.Golden = append(c.Golden, Golden{Text: cm.Comment, Severity: strings.TrimSpace(cm.Severity)})
		}
		patch := filepath.Join(dir, c.Diff)
		if err := os.WriteFile(patch, []byte(diff), 0o644); err != nil {
			return out, fmt.Errorf("write %s: %w", patch, err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(c); err != nil {
			return out, fmt.Errorf("encode case %s: %w", name, err)
		}
		file := filepath.Join(dir, name+".json")
		if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
			return out, fmt.Errorf("write %s: %w", file, err)
		}
		out = append(out, Imported{Case: name, CaseFile: file, PatchFile: patch, Golden: len(c.Golden)})
	}
	if len(out) == 0 {
		return nil, errors.New("the golden comments list no pull request")
	}
	return out, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func caseName(owner, repo string, n int) string {
	return unsafeName.ReplaceAllString(fmt.Sprintf("%s-%s-%d", owner, repo, n), "_")
}
