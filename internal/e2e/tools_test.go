package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
)

// The repository of the tool tests: app/db.py, lib/util.go and web/api.js
// are never part of a change; app/views.py is the changed file.
const (
	toolsDB = `import sqlite3


def find_user(conn, name):
    cur = conn.execute(f"SELECT * FROM users WHERE name = '{name}'")
    return cur.fetchone()
`
	toolsUtil = "package lib\n\nimport \"strings\"\n\n// Normalize trims and lowers s.\nfunc Normalize(s string) string {\n\treturn strings.ToLower(strings.TrimSpace(s))\n}\n"
	toolsAPI  = "export function fetchUser(id) {\n  return fetch(`/api/users/${id}`);\n}\n"
	toolsBase = `from app.db import find_user


def index():
    return "ok"
`
	toolsHead = `from app.db import find_user


def index():
    return "ok"


def handle_search(conn, request):
    user = find_user(conn, request.args["name"])  # BUG: unchecked name reaches SQL
    return user
`
)

// probe is one tool call of the probing reviewer and the text its result
// must hold.
type probe struct {
	tool string
	args map[string]any
	want string
}

// toolProbes are the calls a reviewer makes to check the finding: the
// text it looks for is in the files, unchanged (first eight) and changed
// (last four), with the path filters a model writes: the file itself, a
// recursive glob, none.
var toolProbes = []probe{
	{"grep", map[string]any{"pattern": `conn\.execute\(f"SELECT`, "path_glob": "app/db.py"}, `app/db.py:5:     cur = conn.execute(f"SELECT`},
	{"grep", map[string]any{"pattern": `conn\.execute\(f"SELECT`, "path_glob": "**/*.py"}, `app/db.py:5:`},
	{"grep", map[string]any{"pattern": `conn\.execute\(f"SELECT`, "path_glob": ""}, `app/db.py:5:`},
	{"find_symbol", map[string]any{"name": "find_user"}, `app/db.py:4: def find_user(conn, name):`},
	{"find_symbol", map[string]any{"name": "Normalize"}, `lib/util.go:6: func Normalize(s string) string {`},
	{"read_file", map[string]any{"path": "app/db.py", "start_line": 4, "end_line": 6}, `5:     cur = conn.execute(f"SELECT * FROM users WHERE name = '{name}'")`},
	{"list_dir", map[string]any{"path": "app"}, "db.py\n"},
	{"list_dir", map[string]any{"path": ""}, "web/\n"},
	// The changed file.
	{"grep", map[string]any{"pattern": `BUG: unchecked`, "path_glob": "app/views.py"}, `app/views.py:9:     user = find_user(conn, request.args["name"])`},
	{"grep", map[string]any{"pattern": `find_user\(conn, request`, "path_glob": "**/*.py"}, `app/views.py:9:`},
	{"find_symbol", map[string]any{"name": "handle_search"}, `app/views.py:8: def handle_search(conn, request):`},
	{"read_file", map[string]any{"path": "app/views.py"}, `9:     user = find_user(conn, request.args["name"])  # BUG: unchecked name reaches SQL`},
}

// unchangedProbes is how many of toolProbes look at unchanged files.
const unchangedProbes = 8

// markerAt is how the marker reviewer's findings name their line.
var markerAt = regexp.MustCompile(`marker at (.+?):(\d+): ([^\n]*)`)

// prober is a reviewer whose expert makes toolProbes (eight calls, then
// four), keeps what each returned, and confirms the finding quoting the
// line as the grep returned it; every other stage is the marker reviewer.
type prober struct {
	mu      sync.Mutex
	results map[string][]string // "probe N" → every result of that probe, across runs
}

func (p *prober) handler() llmfake.Handler {
	markers := llmfake.Markers("")
	return func(ctx context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		if len(req.Tools) == 0 || llmfake.SchemaName(req) != "" {
			return markers(ctx, req)
		}
		var text strings.Builder
		byID := map[string]string{}
		for _, m := range req.Messages {
			text.WriteString(m.Content + "\n")
			if m.Role == openai.ChatMessageRoleTool {
				byID[m.ToolCallID] = m.Content
			}
		}
		switch len(byID) {
		case 0:
			return llmfake.Tools(probeCalls(0, unchangedProbes)...)
		case unchangedProbes:
			return llmfake.Tools(probeCalls(unchangedProbes, len(toolProbes))...)
		}
		p.mu.Lock()
		for i := range toolProbes {
			p.results[probeID(i)] = append(p.results[probeID(i)], byID[probeID(i)])
		}
		p.mu.Unlock()
		m := markerAt.FindStringSubmatch(text.String())
		if m == nil {
			return llmfake.FromSchema(req)
		}
		line, _ := strconv.Atoi(m[2])
		quoted := strings.TrimSpace(m[3])
		return llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{
			"verdict": "confirmed", "confidence": 0.9, "reasoning": "grep shows the request value passed to find_user",
			"evidence": []map[string]any{
				{"kind": "content_contains", "path": m[1], "start_line": line, "end_line": line, "match": quoted, "required": true},
				{"kind": "tool_fact", "match": quoted, "required": true},
			},
		}))
	}
}

func probeID(i int) string { return fmt.Sprintf("probe_%d", i+1) }

func probeCalls(from, to int) []openai.ToolCall {
	var calls []openai.ToolCall
	for i := from; i < to; i++ {
		c := llmfake.ToolCall(toolProbes[i].tool, toolProbes[i].args)
		c.ID = probeID(i)
		calls = append(calls, c)
	}
	return calls
}

// take returns and clears the results seen so far.
func (p *prober) take() map[string][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.results
	p.results = map[string][]string{}
	return r
}

// toolsRepo writes the repository at its base and head commits.
func toolsRepo(t *testing.T) (dir, base, head string) {
	t.Helper()
	dir = t.TempDir()
	writeFile(t, dir, "app/db.py", toolsDB)
	writeFile(t, dir, "lib/util.go", toolsUtil)
	writeFile(t, dir, "web/api.js", toolsAPI)
	writeFile(t, dir, "app/views.py", toolsBase)
	base = commitAll(t, dir, "base")
	writeFile(t, dir, "app/views.py", toolsHead)
	return dir, base, commitAll(t, dir, "search by name")
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// TestExpertToolsFindWhatIsThere reviews the same change in every way the
// fleet takes one — a local repository's commit range, a remote clone, a
// diff with its work tree, a diff alone, and the re-review of a pushed
// pull request — with a reviewer whose expert searches, looks up and
// reads text that is in the files, changed and unchanged, through the
// production handlers (the worker's file filter, the snapshot cache, the
// sandbox). Every probe must come back with the line; a file filter that
// skips files without a diff, or a snapshot without the unchanged files,
// fails it.
func TestExpertToolsFindWhatIsThere(t *testing.T) {
	t.Parallel()
	p := &prober{results: map[string][]string{}}
	f := newFleet(t, p.handler(), nil)
	ctx := context.Background()

	check := func(t *testing.T, r review.Review, runs int, want func(i int) (outcome, text string)) {
		t.Helper()
		if r.Status != review.ReviewDone || r.Incomplete {
			t.Fatalf("review %s: %s incomplete=%v (%s)", r.ID, r.Status, r.Incomplete, r.Error)
		}
		results := p.take()
		calls, err := f.sub.Store.ListExpertToolCalls(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(calls) != runs*len(toolProbes) {
			t.Fatalf("stored %d tool calls, want %d runs of %d", len(calls), runs, len(toolProbes))
		}
		for _, c := range calls {
			outcome, _ := want(c.Seq - 1)
			if c.Outcome != outcome || c.Tool != toolProbes[c.Seq-1].tool {
				t.Errorf("finding %d call %d: %s %s %s, want %s", c.FindingID, c.Seq, c.Tool, c.Args, c.Outcome, outcome)
			}
		}
		for i := range toolProbes {
			_, text := want(i)
			got := results[probeID(i)]
			if len(got) != runs {
				t.Errorf("probe %d (%s %v): %d results, want %d", i+1, toolProbes[i].tool, toolProbes[i].args, len(got), runs)
			}
			for _, g := range got {
				if !strings.Contains(g, text) {
					t.Errorf("probe %d (%s %v) returned\n%s\nwant it to hold %q", i+1, toolProbes[i].tool, toolProbes[i].args, g, text)
				}
			}
		}
		runsByFinding, err := f.sub.Store.ListExpertRuns(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for id, run := range runsByFinding {
			if run.StopReason != "accepted" {
				t.Errorf("finding %d: expert stopped %s, want accepted: its evidence is the grep result", id, run.StopReason)
			}
		}
	}
	allHit := func(i int) (string, string) { return "hit", toolProbes[i].want }

	t.Run("repo", func(t *testing.T) {
		dir, base, head := toolsRepo(t)
		check(t, f.review(t, submit.Request{Origin: submit.FromOperator, Repo: dir, Base: base, Head: head}), 1, allHit)
	})
	t.Run("remote", func(t *testing.T) {
		dir, base, head := toolsRepo(t)
		bare := filepath.Join(t.TempDir(), "srv", "tools.git")
		gitOut(t, dir, "clone", "-q", "--bare", dir, bare)
		r := f.review(t, submit.Request{Origin: submit.FromOperator, Repo: "file://" + bare, Base: base, Head: head})
		if r.SnapshotFallback != "" {
			t.Fatalf("remote review fell back to the changed files: %s", r.SnapshotFallback)
		}
		check(t, r, 1, allHit)
	})
	t.Run("diff-with-repo", func(t *testing.T) {
		dir, base, head := toolsRepo(t)
		patch := filepath.Join(t.TempDir(), "change.diff")
		if err := os.WriteFile(patch, []byte(gitOut(t, dir, "diff", base, head)), 0o644); err != nil {
			t.Fatal(err)
		}
		check(t, f.review(t, submit.Request{Origin: submit.FromOperator, DiffFile: patch, Repo: dir}), 1, allHit)
	})
	t.Run("diff-alone", func(t *testing.T) {
		// Without its repository a diff may only add files: the stored
		// files are all the tools can see, and they say so.
		var b strings.Builder
		lines := strings.Split(strings.TrimSuffix(toolsHead, "\n"), "\n")
		fmt.Fprintf(&b, "--- /dev/null\n+++ b/app/views.py\n@@ -0,0 +1,%d @@\n", len(lines))
		for _, l := range lines {
			b.WriteString("+" + l + "\n")
		}
		patch := filepath.Join(t.TempDir(), "new.diff")
		if err := os.WriteFile(patch, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		r := f.review(t, submit.Request{Origin: submit.FromOperator, DiffFile: patch})
		if !strings.Contains(r.SnapshotFallback, "without its repository") {
			t.Errorf("snapshot_fallback = %q", r.SnapshotFallback)
		}
		const note = "holds only the files the change touched"
		check(t, r, 1, func(i int) (string, string) {
			switch {
			case i >= unchangedProbes:
				return "hit", toolProbes[i].want
			case toolProbes[i].tool == "read_file":
				return "error", "no such file or directory: app/db.py\nnote: this review's snapshot " + note
			case toolProbes[i].tool == "list_dir" && toolProbes[i].args["path"] == "":
				return "hit", "app/\n" // the root holds the changed file's directory, nothing else
			case toolProbes[i].tool == "list_dir":
				return "hit", "views.py\n"
			}
			return "empty", note
		})
	})
	t.Run("incremental", func(t *testing.T) {
		dir, base, head := toolsRepo(t)
		req := submit.Request{Origin: submit.FromOperator, Repo: dir, Base: base, Head: head, ChangeKey: "pr:example/tools#1"}
		check(t, f.review(t, req), 1, allHit)
		// A push moves the marked line down one: the re-review's tools
		// see the new head.
		writeFile(t, dir, "app/views.py", strings.Replace(toolsHead, "def handle_search", "# Search by name.\ndef handle_search", 1))
		req.Head = commitAll(t, dir, "document search")
		second := f.review(t, req)
		if since, err := f.sub.Store.SinceReview(ctx, second.ID); err != nil || since == "" {
			t.Fatalf("the push was not reviewed incrementally (%q, %v)", since, err)
		}
		check(t, second, 1, func(i int) (string, string) {
			want := toolProbes[i].want
			want = strings.Replace(want, "app/views.py:9:", "app/views.py:10:", 1)
			want = strings.Replace(want, "app/views.py:8:", "app/views.py:9:", 1)
			if strings.HasPrefix(want, "9:     user") {
				want = "10" + strings.TrimPrefix(want, "9") // read_file: line 10 now
			}
			return "hit", want
		})
	})
}
