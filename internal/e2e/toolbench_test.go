package e2e

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
)

// TestToolOutcomeCensus reviews the project's own fixtures (the two
// sample evaluation cases, as a diff with its tree, and the twenty-file
// change of the incremental test, as a commit range) with a reviewer that
// knows each marked line and checks it the way a careful person would:
// read the file, list its directory, grep for the line's exact text with
// the file, a recursive glob and no filter, look up the enclosing
// definition and grep for its uses. It tallies what each tool call gave
// back, judged from the text the model received, so the same census runs
// on any version of the fleet. Opt-in (REVIEWFLEET_TOOL_CENSUS=1): it
// measures, the assertions of TestExpertToolsFindWhatIsThere guard.
func TestToolOutcomeCensus(t *testing.T) {
	if os.Getenv("REVIEWFLEET_TOOL_CENSUS") == "" {
		t.Skip("set REVIEWFLEET_TOOL_CENSUS=1 to count expert tool outcomes on the fixtures")
	}
	c := &census{counts: map[string]map[string]int{}}
	f := newFleet(t, c.handler(), func(cfg *config.Config) { cfg.Manager.MaxPerRiskType = 100 })
	var reviews []review.Review
	for _, name := range []string{"cache-expiry", "limiter-window"} {
		reviews = append(reviews, f.review(t, submit.Request{Origin: submit.FromOperator,
			DiffFile: filepath.Join("..", "..", "testdata", "eval", name+".patch"),
			Repo:     filepath.Join("..", "..", "testdata", "eval", "src"),
		}))
	}
	dir, base, head := twentyFiles(t)
	reviews = append(reviews, f.review(t, submit.Request{Origin: submit.FromOperator, Repo: dir, Base: base, Head: head}))
	accepted, runs := 0, 0
	for _, r := range reviews {
		if r.Status != review.ReviewDone {
			t.Fatalf("review %s: %s (%s)", r.ID, r.Status, r.Error)
		}
		ers, err := f.sub.Store.ListExpertRuns(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, run := range ers {
			runs++
			if run.StopReason == "accepted" {
				accepted++
			}
		}
	}
	t.Logf("expert runs: %d, accepted: %d", runs, accepted)
	t.Logf("| tool | hit | empty | error |")
	tools := make([]string, 0, len(c.counts))
	for tool := range c.counts {
		tools = append(tools, tool)
	}
	sort.Strings(tools)
	for _, tool := range tools {
		m := c.counts[tool]
		t.Logf("| %s | %d | %d | %d |", tool, m["hit"], m["empty"], m["error"])
	}
}

// census is the careful reviewer: its expert works through three rounds
// of calls per finding and counts their results.
type census struct {
	mu     sync.Mutex
	counts map[string]map[string]int
}

var (
	censusMarker = regexp.MustCompile(`marker at (.+?):(\d+): ([^\n]*)`)
	// censusDef finds a Go, Python or JavaScript definition in a numbered
	// read_file line ("12: func Name(").
	censusDef = regexp.MustCompile(`^(\d+): (?:func (?:\([^)]*\) )?|\s*def |\s*(?:export )?function )([A-Za-z_]\w*)`)
)

func (c *census) handler() llmfake.Handler {
	markers := llmfake.Markers("")
	return func(ctx context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		if len(req.Tools) == 0 || llmfake.SchemaName(req) != "" {
			return markers(ctx, req)
		}
		var text strings.Builder
		var calls []openai.ToolCall
		results := map[string]string{}
		for _, m := range req.Messages {
			text.WriteString(m.Content + "\n")
			calls = append(calls, m.ToolCalls...)
			if m.Role == openai.ChatMessageRoleTool {
				results[m.ToolCallID] = m.Content
			}
		}
		mk := censusMarker.FindStringSubmatch(text.String())
		if mk == nil {
			return llmfake.FromSchema(req)
		}
		file, quoted := mk[1], strings.TrimSpace(mk[3])
		line, _ := strconv.Atoi(mk[2])
		exact := regexp.QuoteMeta(quoted)
		switch len(results) {
		case 0:
			return llmfake.Tools(
				llmfake.ToolCall("read_file", map[string]any{"path": file}),
				llmfake.ToolCall("list_dir", map[string]any{"path": path.Dir(file)}),
				llmfake.ToolCall("grep", map[string]any{"pattern": exact, "path_glob": file}),
				llmfake.ToolCall("grep", map[string]any{"pattern": exact, "path_glob": "**/*" + path.Ext(file)}),
				llmfake.ToolCall("grep", map[string]any{"pattern": exact, "path_glob": ""}),
			)
		case 5:
			name := enclosingDef(results[calls[0].ID], line)
			return llmfake.Tools(
				llmfake.ToolCall("find_symbol", map[string]any{"name": name}),
				llmfake.ToolCall("grep", map[string]any{"pattern": `\b` + name + `\(`, "path_glob": ""}),
			)
		}
		c.mu.Lock()
		for _, call := range calls {
			if call.Function.Name == "submit_verdict" {
				continue
			}
			r := results[call.ID]
			outcome := "hit"
			switch {
			case strings.HasPrefix(r, "error: "):
				outcome = "error"
			case strings.HasPrefix(r, "no matching lines found"), strings.HasPrefix(r, "no definitions found"):
				outcome = "empty"
			}
			if c.counts[call.Function.Name] == nil {
				c.counts[call.Function.Name] = map[string]int{}
			}
			c.counts[call.Function.Name][outcome]++
		}
		c.mu.Unlock()
		return llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{
			"verdict": "confirmed", "confidence": 0.9, "reasoning": "the marked line is as the finding says",
			"evidence": []map[string]any{
				{"kind": "content_contains", "path": file, "start_line": line, "end_line": line, "match": quoted, "required": true},
				{"kind": "tool_fact", "match": quoted, "required": true},
			},
		}))
	}
}

// enclosingDef is the last definition at or above line in a read_file
// result ("_" when there is none, which finds nothing).
func enclosingDef(readResult string, line int) string {
	name := "_"
	for _, l := range strings.Split(readResult, "\n") {
		m := censusDef.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if n, _ := strconv.Atoi(m[1]); n > line {
			break
		}
		name = m[2]
	}
	return name
}
