package llmfake

// What the golden reviewer reads from the stages' prompts and the expert's
// tool results. Everything here looks for content (code, paths, quotes)
// rather than for a prompt's layout, so that rewording or re-fencing a
// prompt does not blind the reviewer; when a layout does matter it is
// named here and nowhere else.

import (
	"encoding/json"
	"path"
	"regexp"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// normSpace collapses every run of white space to one space, as the
// accept gate compares quotes.
func normSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// containsCode reports whether code appears in text, white space aside.
// Line-number gutters ("  12 + ", "   12 | ") do not get in the way: the
// code sits inside its line.
func containsCode(text, code string) bool {
	c := normSpace(code)
	return c != "" && strings.Contains(normSpace(text), c)
}

// messageText is the text of one message, multi-part ones joined.
func messageText(m openai.ChatCompletionMessage) string {
	if m.Content != "" || len(m.MultiContent) == 0 {
		return m.Content
	}
	var parts []string
	for _, p := range m.MultiContent {
		if p.Text != "" {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// firstUser is the text of the first user message: the expert's task.
func firstUser(req openai.ChatCompletionRequest) string {
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleUser {
			return messageText(m)
		}
	}
	return ""
}

// pastCall is a tool call the reviewer made earlier in the conversation,
// with the result the runtime sent back ("" and answered false while it
// has none).
type pastCall struct {
	name     string
	args     string // canonical JSON
	result   string
	answered bool
}

// conversation lists the tool calls of the assistant messages in order,
// each with its tool message.
func conversation(req openai.ChatCompletionRequest) []pastCall {
	var calls []pastCall
	index := map[string]int{}
	for _, m := range req.Messages {
		switch m.Role {
		case openai.ChatMessageRoleAssistant:
			for _, tc := range m.ToolCalls {
				index[tc.ID] = len(calls)
				calls = append(calls, pastCall{name: tc.Function.Name, args: canonicalJSON(tc.Function.Arguments)})
			}
		case openai.ChatMessageRoleTool:
			if i, ok := index[m.ToolCallID]; ok {
				calls[i].result, calls[i].answered = messageText(m), true
			}
		}
	}
	return calls
}

// latestResults are the tool calls answered since the reviewer last spoke:
// each result is counted once, in the request that brings it.
func latestResults(req openai.ChatCompletionRequest) []pastCall {
	last := -1
	for i, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleAssistant {
			last = i
		}
	}
	if last < 0 {
		return nil
	}
	var out []pastCall
	for _, c := range conversation(openai.ChatCompletionRequest{Messages: req.Messages[last:]}) {
		if c.answered {
			out = append(out, c)
		}
	}
	return out
}

// canonicalJSON re-encodes JSON arguments with sorted keys, so a call can
// be recognised whatever spacing or key order it was sent with.
func canonicalJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// forcedSummary reports a request in which the runtime has closed the
// tools and wants the verdict as text.
func forcedSummary(req openai.ChatCompletionRequest) bool {
	s, ok := req.ToolChoice.(string)
	return ok && s == "none"
}

// hit is one line of a grep or find_symbol result.
type hit struct {
	path string
	line int
	text string
}

// scanHit is how grep and find_symbol list a line: "path:12: text".
var scanHit = regexp.MustCompile(`^\s*([^\s:][^:]*):(\d+): ?(.*)$`)

// scanHits reads the hits of a grep or find_symbol result; an empty or
// failed search has none.
func scanHits(result string) []hit {
	var out []hit
	for _, l := range strings.Split(result, "\n") {
		m := scanHit.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		out = append(out, hit{path: cleanPath(m[1]), line: n, text: m[3]})
	}
	return out
}

// numberedLine is how read_file lists a line: "12: text".
var numberedLine = regexp.MustCompile(`^\s*(\d+): ?(.*)$`)

// readLines reads the numbered lines of a read_file result.
func readLines(result string) map[int]string {
	out := map[int]string{}
	for _, l := range strings.Split(result, "\n") {
		if m := numberedLine.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			out[n] = m[2]
		}
	}
	return out
}

// goQuoted is a double-quoted Go string literal, as the expert stage
// quotes each evidence match.
var goQuoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// passedQuotes returns the quoted matches of the evidence items the eval
// prompt reports as passed: lines that say "passed" and carry a quoted
// match. A quote that does not unquote is taken as written.
func passedQuotes(prompt string) []string {
	var out []string
	for _, l := range strings.Split(prompt, "\n") {
		if !strings.Contains(strings.ToLower(l), "passed") {
			continue
		}
		for _, q := range goQuoted.FindAllString(l, -1) {
			if s, err := strconv.Unquote(q); err == nil {
				out = append(out, s)
			} else {
				out = append(out, strings.Trim(q, `"`))
			}
		}
	}
	return out
}

// cleanPath makes a repository path comparable.
func cleanPath(p string) string {
	return path.Clean(strings.TrimPrefix(strings.TrimSpace(p), "./"))
}

// mentionsPath reports whether p appears in text as a whole path, not as
// the tail of a longer one.
func mentionsPath(text, p string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], p)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(p)
		before := start == 0 || !isPathByte(text[start-1])
		after := end == len(text) || !isPathByte(text[end]) ||
			text[end] == '.' && (end+1 == len(text) || !isPathByte(text[end+1])) // a full stop

		if before && after {
			return true
		}
		i = start + 1
	}
}

func isPathByte(c byte) bool {
	return c == '/' || c == '.' || c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
