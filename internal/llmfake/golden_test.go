package llmfake

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

const polyglot = "../../testdata/eval/polyglot"

func loadPolyglot(t *testing.T) *GoldenReviewer {
	t.Helper()
	g, err := NewGoldenReviewer(context.Background(), polyglot)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The reviewer knows every located golden issue of the dataset, with the
// code to search for: the snippet, or the longest line of its range.
func TestGoldenReviewerLoadsTheDataset(t *testing.T) {
	g := loadPolyglot(t)
	if g.Issues() != 12 {
		t.Errorf("%d issues, want 12", g.Issues())
	}
	files := map[string]bool{}
	for _, d := range g.decoys {
		files[d.caseName+" "+d.file] = true
		if !farFrom(g.issues, d.file, d.decoyLine, 4) {
			t.Errorf("decoy %s:%d is near a golden issue", d.file, d.decoyLine)
		}
	}
	if g.Decoys() != 7 || len(files) != 7 {
		t.Errorf("%d decoys in %d files, want one in each of the 7 changed files", g.Decoys(), len(files))
	}
	codes := map[string]string{}
	for _, k := range g.issues {
		codes[k.file+":"+itoa(k.start)] = k.code
	}
	if got := codes["cache/stats.go:23"]; got != "s.hits[key]++" {
		t.Errorf("derived code of the race: %q", got)
	}
	if got := codes["api/users.go:38"]; got != "first := users[0]" {
		t.Errorf("snippet of the bounds issue: %q", got)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// convo plays the expert's side of a conversation: the runtime's task,
// then each tool call of the reviewer answered with a scripted result.
type convo struct {
	t    *testing.T
	h    Handler
	msgs []openai.ChatCompletionMessage
}

func newConvo(t *testing.T, g *GoldenReviewer, task string) *convo {
	return &convo{t: t, h: g.Handler(), msgs: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You verify findings."},
		{Role: openai.ChatMessageRoleUser, Content: task},
	}}
}

// next asks the reviewer for its next move and returns its one tool call.
func (c *convo) next() openai.ToolCall {
	c.t.Helper()
	r := c.h(context.Background(), openai.ChatCompletionRequest{Messages: c.msgs, Tools: []openai.Tool{{Type: openai.ToolTypeFunction}}})
	if len(r.ToolCalls) != 1 {
		c.t.Fatalf("reply %+v, want one tool call", r)
	}
	tc := r.ToolCalls[0]
	c.msgs = append(c.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{tc}})
	return tc
}

// answer sends the result of the last call, fenced as the runtime does.
func (c *convo) answer(tc openai.ToolCall, result string) {
	fenced := "<<<UNTRUSTED-0123abcd " + tc.Function.Name + " result\n" + result + "\nUNTRUSTED-0123abcd>>>\n"
	c.msgs = append(c.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, Content: fenced, ToolCallID: tc.ID})
}

func args(t *testing.T, tc openai.ToolCall) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(tc.Function.Arguments), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func issue(t *testing.T, g *GoldenReviewer, file string, line int) *knownFinding {
	t.Helper()
	for _, k := range g.issues {
		if k.file == file && k.start == line {
			return k
		}
	}
	t.Fatalf("no issue at %s:%d", file, line)
	return nil
}

// The expert cites only what the tools returned: the line numbers and
// text of the scripted results, not the dataset's, end in its evidence.
func TestGoldenExpertQuotesOnlyToolResults(t *testing.T) {
	g := loadPolyglot(t)
	k := issue(t, g, "api/users.go", 33)
	c := newConvo(t, g, "Finding (authorization): "+k.description+"\nLocation: api/users.go lines 33-33\n")

	tc := c.next()
	if a := args(t, tc); tc.Function.Name != "grep" || !regexp.MustCompile(a["pattern"].(string)).MatchString("\tusers, err := store.FindByName(h.DB, name)") {
		t.Fatalf("first call %s %v, want a grep for the issue's code", tc.Function.Name, a)
	}
	c.answer(tc, "2 matching lines in 2 files\napi/other.go:5: users, err := store.FindByName(h.DB, name)\napi/users.go:61: users, err := store.FindByName(h.DB, name)")
	tc = c.next()
	if a := args(t, tc); tc.Function.Name != "read_file" || a["path"] != "api/users.go" || a["start_line"] != 58.0 {
		t.Fatalf("second call %s %v, want a read of api/users.go around 61", tc.Function.Name, a)
	}
	c.answer(tc, "api/users.go lines 58-64 of 80\n60: }\n61: \tusers, err := store.FindByName(h.DB, name)\n62: \tif err != nil {")
	tc = c.next()
	if a := args(t, tc); tc.Function.Name != "find_symbol" || a["name"] != "FindByName" {
		t.Fatalf("third call %s %v", tc.Function.Name, a)
	}
	c.answer(tc, "1 definitions in 1 files\nlib/q.go:90: func FindByName(db *sql.DB, name string) ([]User, error) {")
	tc = c.next()
	if a := args(t, tc); tc.Function.Name != "grep" || a["path_glob"] != "lib/q.go" {
		t.Fatalf("fourth call %s %v, want a grep in the definition's file", tc.Function.Name, a)
	}
	c.answer(tc, `1 matching lines in 1 files`+"\n"+`lib/q.go:91: 	q := "SELECT id, name FROM users WHERE name = '" + name + "'"`)
	tc = c.next()
	c.answer(tc, "lib/q.go lines 88-94 of 100\n"+`91: 	q := "SELECT id, name FROM users WHERE name = '" + name + "'"`)
	tc = c.next()
	if tc.Function.Name != "submit_verdict" {
		t.Fatalf("last call %s", tc.Function.Name)
	}
	var v struct {
		Verdict  string
		Evidence []struct {
			Kind, Path, Match string
			StartLine         int `json:"start_line"`
		}
	}
	if err := json.Unmarshal([]byte(tc.Function.Arguments), &v); err != nil {
		t.Fatal(err)
	}
	if v.Verdict != "confirmed" || len(v.Evidence) != 3 {
		t.Fatalf("verdict %+v", v)
	}
	if e := v.Evidence[0]; e.Path != "api/users.go" || e.StartLine != 61 || e.Match != "users, err := store.FindByName(h.DB, name)" {
		t.Errorf("evidence of the cited line %+v", e)
	}
	if e := v.Evidence[2]; e.Path != "lib/q.go" || e.StartLine != 91 || !strings.Contains(e.Match, `WHERE name = '" + name`) {
		t.Errorf("evidence of the helper %+v", e)
	}
}

// A search that finds nothing, or a definition that is nowhere, makes
// the reviewer refute a true issue: it believes its tools.
func TestGoldenExpertRefutesWhatTheToolsDoNotShow(t *testing.T) {
	g := loadPolyglot(t)
	for name, script := range map[string][]string{
		"empty grep":      {"no matching lines found"},
		"hit elsewhere":   {"1 matching lines in 1 files\nsrc/other.ts:3: const safe = sanitizeName(req.body.name);"},
		"no definition":   {"1 matching lines in 1 files\nsrc/routes/upload.ts:20:   const safe = sanitizeName(req.body.name);", "src/routes/upload.ts lines 17-23 of 23\n20:   const safe = sanitizeName(req.body.name);", "no definitions found"},
		"read shows else": {"1 matching lines in 1 files\nsrc/routes/upload.ts:20:   const safe = sanitizeName(req.body.name);", "src/routes/upload.ts lines 17-23 of 23\n20:   const safe = name;"},
		"tool error":      {"error: grep timed out after 5s"},
	} {
		t.Run(name, func(t *testing.T) {
			k := issue(t, g, "src/routes/upload.ts", 20)
			c := newConvo(t, g, "Finding (authorization): "+k.description)
			for _, res := range script {
				c.answer(c.next(), res)
			}
			tc := c.next()
			if tc.Function.Name != "submit_verdict" || args(t, tc)["verdict"] != "refuted" {
				t.Errorf("after %q: %s %s, want a refuted verdict", script, tc.Function.Name, tc.Function.Arguments)
			}
		})
	}
}

// Decoys are read and refuted with the line the read returned.
func TestGoldenExpertRefutesDecoys(t *testing.T) {
	g := loadPolyglot(t)
	d := g.decoys[0]
	c := newConvo(t, g, "Finding (robustness): "+d.description)
	tc := c.next()
	if a := args(t, tc); tc.Function.Name != "read_file" || a["path"] != d.file {
		t.Fatalf("call %s %v", tc.Function.Name, a)
	}
	c.answer(tc, fmt.Sprintf("%s lines 1-9 of 9\n%d: \t%s", d.file, d.decoyLine, d.code))
	tc = c.next()
	a := args(t, tc)
	ev, _ := a["evidence"].([]any)
	if tc.Function.Name != "submit_verdict" || a["verdict"] != "refuted" || len(ev) != 1 || ev[0].(map[string]any)["match"] != d.code {
		t.Errorf("verdict %s", tc.Function.Arguments)
	}
}

// Intent recognises a file by its diff's content, whatever the prompt's
// layout, and proposes its issues at their lines plus its decoy; a file
// only named (the list of the change's files) gets nothing.
func TestGoldenIntentRecognisesFilesByContent(t *testing.T) {
	g := loadPolyglot(t)
	patch, err := os.ReadFile(filepath.Join(polyglot, "ts-upload.patch"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("Files: api/users.go, src/routes/upload.ts\n== some new layout: [[path]] src/routes/upload.ts ==\n<<<FENCE-x\n")
	for i, l := range strings.Split(string(patch), "\n") {
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
			fmt.Fprintf(&b, "%4d ++ %s\n", i, l[1:])
		}
	}
	b.WriteString("FENCE-x>>>\n")
	r := structured(t, g.Handler(), "reviewfleet_intent", b.String())
	var out struct {
		Findings []struct {
			File        string
			LineStart   int `json:"line_start"`
			Description string
		}
	}
	if err := json.Unmarshal([]byte(r.Content), &out); err != nil {
		t.Fatal(err)
	}
	lines := []int{}
	for _, f := range out.Findings {
		if f.File != "src/routes/upload.ts" {
			t.Errorf("finding in %s, whose diff is not shown", f.File)
		}
		lines = append(lines, f.LineStart)
	}
	if len(lines) != 3 || lines[0] != 17 || lines[1] != 20 {
		t.Errorf("findings at %v, want the issues at 17 and 20 and a decoy", lines)
	}
}

// Verify anchors what the prompt shows; eval confirms only on passed
// evidence quoting the issue's code, not on the code in the prompt.
func TestGoldenVerifyAndEval(t *testing.T) {
	g := loadPolyglot(t)
	k := issue(t, g, "api/users.go", 38)
	h := g.Handler()
	if r := structured(t, h, "reviewfleet_verify", "- description: "+k.description+"\n   38 | \tfirst := users[0]\n"); !strings.Contains(r.Content, `"anchored":true`) {
		t.Errorf("verify with the code shown: %s", r.Content)
	}
	if r := structured(t, h, "reviewfleet_verify", "- description: "+k.description+"\n   38 | \tfirst := users[1]\n"); !strings.Contains(r.Content, `"anchored":false`) {
		t.Errorf("verify without the code: %s", r.Content)
	}
	claim := "- claim: " + k.description + "\n"
	for prompt, want := range map[string]string{
		claim + `  - evidence checked against the repository: passed content_contains api/users.go:38-38 "first := users[0]" — found in api/users.go lines 38-38` + "\n": "confirmed",
		claim + `  - evidence checked against the repository: FAILED content_contains api/users.go:38-38 "first := users[0]" — not found` + "\n":                         "disputed",
		claim + "Head version:\n   38 | \tfirst := users[0]\n": "disputed",
	} {
		if r := structured(t, h, "reviewfleet_eval", prompt); !strings.Contains(r.Content, `"verdict":"`+want+`"`) {
			t.Errorf("eval of %q: %s, want %s", prompt, r.Content, want)
		}
	}
}

// structured sends one request with the given schema name and user
// prompt.
func structured(t *testing.T, h Handler, schema, prompt string) Reply {
	t.Helper()
	return h(context.Background(), openai.ChatCompletionRequest{
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: prompt}},
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: schema}},
	})
}

// The same description in two places is told apart by the file and the
// lines the prompt names; a prompt that cuts a long description short
// still identifies it.
func TestGoldenIdentify(t *testing.T) {
	long := strings.Repeat("The lock is released before the map is written, ", 4)
	a := &knownFinding{file: "a/store.go", start: 10, end: 10, description: "Missing nil check."}
	b := &knownFinding{file: "b/store.go", start: 30, end: 31, description: "Missing nil check."}
	c := &knownFinding{file: "c.go", start: 5, end: 5, description: long}
	g := &GoldenReviewer{issues: []*knownFinding{a, b, c}}
	for prompt, want := range map[string]*knownFinding{
		"Finding: Missing nil check.\nLocation: b/store.go lines 30-31":           b,
		"- file: a/store.go\n- lines: 10-10\n- description: Missing  nil\ncheck.": a,
		"Finding: " + long[:100] + "…":                                            c,
		"Finding: something else at a/store.go":                                   nil,
	} {
		if got := g.identify(prompt); got != want {
			t.Errorf("%q: identified %+v, want %+v", prompt, got, want)
		}
	}
}

// Datasets written for no reviewer in particular load too: a git case's
// code comes from its head revision, a bare patch's from the diff.
func TestGoldenReviewerDerivesCodeFromAnyCase(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	git := func(args ...string) {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q")
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(repo, "m.py"), "def f(x):\n    return x\n")
	git("add", "-A")
	git("commit", "-qm", "base")
	write(filepath.Join(repo, "m.py"), "def f(x):\n    return x\n\n\ndef g(items):\n    total = items[0] + items[1]\n    return total\n")
	git("commit", "-qam", "head")
	write(filepath.Join(dir, "git.json"), `{"name": "git", "repo": "repo", "base": "HEAD~1", "head": "HEAD", "purpose": "add g",
		"golden": [{"file": "m.py", "line": 6, "text": "g indexes items without checking its length."},
		           {"file": "m.py", "line": 4, "text": "A blank line gives way to its surroundings."}]}`)
	write(filepath.Join(dir, "bare.patch"), "diff --git a/n.go b/n.go\n--- a/n.go\n+++ b/n.go\n@@ -1,1 +1,3 @@\n package n\n+\n+var table = map[string]int{\"a\": 1}\n")
	write(filepath.Join(dir, "bare.json"), `{"name": "bare", "diff": "bare.patch", "purpose": "add a table",
		"golden": [{"file": "n.go", "line": 3, "text": "The table is written by every request."}, {"text": "text only"}]}`)
	g, err := NewGoldenReviewer(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]string{}
	for _, k := range g.issues {
		codes[k.file+":"+itoa(k.start)] = k.code
	}
	want := map[string]string{
		"m.py:6": "total = items[0] + items[1]",
		"m.py:4": "total = items[0] + items[1]",
		"n.go:3": `var table = map[string]int{"a": 1}`,
	}
	if len(codes) != len(want) {
		t.Errorf("issues %v, want %v", codes, want)
	}
	for k, v := range want {
		if codes[k] != v {
			t.Errorf("code of %s: %q, want %q", k, codes[k], v)
		}
	}
}
