package demo

import (
	"context"
	"regexp"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

// Model is the model name the recorded exchange answers to.
const Model = "recorded-demo"

// recorded is one finding of the recorded exchange and how every stage
// judged it.
type recorded struct {
	File, Match                   string // the cited line is the head line containing Match
	Line                          int    // or a fixed line, when it is not in the file
	Risk, Severity                string
	Confidence                    float64
	Description, Suggestion       string
	Anchored                      bool
	Expert                        string // confirmed | refuted | inconclusive
	ExpertConfidence              float64
	ExpertReason                  string
	Eval, EvalReason, EvalCounter string
}

var exchange = []recorded{
	{
		File: "store/users.go", Match: `WHERE name = '" + name + "'"`, Risk: "authorization", Severity: "critical", Confidence: 0.9,
		Description: "FindByName builds its SQL by concatenating the caller's name into the query string, so a crafted name can inject SQL and read or change any row.",
		Suggestion:  "Pass name as a query parameter: s.db.QueryRow(\"SELECT … WHERE name = $1\", name).",
		Anchored:    true, Expert: "confirmed", ExpertConfidence: 0.92,
		ExpertReason: "The query string is assembled from the name argument and handed to QueryRow with no parameters; the base version used $1.",
		Eval:         "confirmed", EvalReason: "No escaping or validation of name exists anywhere on the path to QueryRow.",
		EvalCounter: "Searched for sanitisation of name before the call; none found.",
	},
	{
		File: "cache/cache.go", Match: "for k, e := range c.items {", Risk: "concurrency", Severity: "high", Confidence: 0.8,
		Description: "The janitor goroutine ranges over and deletes from c.items while Set and Get access the same map from other goroutines with no lock: a data race that can crash the process with concurrent map writes.",
		Suggestion:  "Restore the sync.Mutex (or use sync.Map) and hold it in the janitor, Set and Get.",
		Anchored:    true, Expert: "confirmed", ExpertConfidence: 0.85,
		ExpertReason: "The mutex was removed in this change while a background goroutine now mutates the map.",
		Eval:         "uncertain", EvalReason: "The race is real if the cache is shared between goroutines; no caller is visible in this repository.",
		EvalCounter: "Looked for single-goroutine use of Cache; the package exports it without restriction.",
	},
	{
		File: "api/auth.go", Match: "return parts[1], nil", Risk: "robustness", Severity: "medium", Confidence: 0.75,
		Description: "ParseBearer indexes parts[1] without checking the header has two parts, so an empty or one-word Authorization header panics; the scheme is no longer checked either.",
		Suggestion:  "Use strings.Cut and return ErrNoToken when the scheme is not Bearer or the token is empty.",
		Anchored:    true, Expert: "confirmed", ExpertConfidence: 0.8,
		ExpertReason: "strings.Split of a header without a space yields one element; parts[1] then panics.",
		Eval:         "confirmed", EvalReason: "An empty header is a normal input for this function and reaches parts[1].",
		EvalCounter: "Checked for a length check or recover; none.",
	},
	{
		File: "cache/cache.go", Match: "c.items[key] = entry{value: value", Risk: "intent", Severity: "low", Confidence: 0.7,
		Description: "Set accepts a negative ttl, which stores an entry that is already expired.",
		Suggestion:  "Reject or clamp non-positive ttl values.",
		Anchored:    true, Expert: "refuted", ExpertConfidence: 0.2,
		ExpertReason: "The behaviour is unchanged from the base version and an expired entry is simply never returned by Get.",
	},
	{
		File: "api/auth.go", Line: 120, Risk: "static", Severity: "low", Confidence: 0.6,
		Description: "The error returned by ParseBearer is never checked by its callers.",
		Suggestion:  "Check the error.",
	},
}

// NewServer starts the OpenAI-compatible server that plays the recorded
// exchange back.
func NewServer() *llmfake.Server {
	return llmfake.New(Handler)
}

// Handler answers requests from the recorded exchange.
func Handler(_ context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
	switch llmfake.SchemaName(req) {
	case "reviewfleet_intent":
		return intentReply(req)
	case "reviewfleet_verify":
		return byFinding(req, func(r recorded) llmfake.Reply {
			return llmfake.JSON(map[string]any{"anchored": r.Anchored, "evidence": "The cited line reads: " + strings.TrimSpace(r.Match), "adjusted_confidence": r.Confidence})
		})
	case "reviewfleet_eval":
		return byFinding(req, func(r recorded) llmfake.Reply {
			claim := "If the finding holds, " + r.File + " should show: " + strings.TrimSpace(r.Match)
			return llmfake.JSON(map[string]any{"claim": claim, "counter_evidence": r.EvalCounter, "verdict": orDefault(r.Eval, "uncertain"), "reason": r.EvalReason, "final_confidence": r.ExpertConfidence})
		})
	}
	if len(req.Tools) > 0 {
		return expertReply(req)
	}
	return llmfake.Fail(400, "the recorded demo exchange has no reply for this request")
}

var fileHeader = regexp.MustCompile(`(?m)^### File: (\S+)`)

func intentReply(req openai.ChatCompletionRequest) llmfake.Reply {
	user := llmfake.LastUser(req)
	var findings []map[string]any
	for _, m := range fileHeader.FindAllStringSubmatch(user, -1) {
		for _, r := range exchange {
			if r.File != m[1] {
				continue
			}
			line := r.line()
			findings = append(findings, map[string]any{
				"risk_type": r.Risk, "file": r.File, "line_start": line, "line_end": line,
				"description": r.Description, "suggestion": r.Suggestion, "quote": r.Match, "fix": "",
				"severity": r.Severity, "confidence": r.Confidence,
			})
		}
	}
	if findings == nil {
		findings = []map[string]any{}
	}
	return llmfake.JSON(map[string]any{"findings": findings})
}

func (r recorded) line() int {
	if r.Match != "" {
		return lineOf(r.File, r.Match)
	}
	return r.Line
}

// byFinding finds which recorded finding a request is about (its
// description is quoted in the prompt) and replies for it.
func byFinding(req openai.ChatCompletionRequest, reply func(recorded) llmfake.Reply) llmfake.Reply {
	var text strings.Builder
	for _, m := range req.Messages {
		text.WriteString(m.Content)
	}
	for _, r := range exchange {
		if strings.Contains(text.String(), r.Description) {
			return reply(r)
		}
	}
	return llmfake.Fail(400, "the recorded demo exchange does not know this finding")
}

// expertReply plays the agent's investigation: read the cited lines, then
// submit a verdict whose evidence quotes them.
func expertReply(req openai.ChatCompletionRequest) llmfake.Reply {
	return byFinding(req, func(r recorded) llmfake.Reply {
		line := r.line()
		toolResults := 0
		for _, m := range req.Messages {
			if m.Role == openai.ChatMessageRoleTool {
				toolResults++
			}
		}
		if toolResults == 0 {
			return llmfake.Tools(llmfake.ToolCall("read_file", map[string]any{"path": r.File, "start_line": max(1, line-6), "end_line": line + 6}))
		}
		evidence := []map[string]any{
			{"kind": "file_exists", "path": r.File, "required": true},
			{"kind": "content_contains", "path": r.File, "start_line": line, "end_line": line, "match": strings.TrimSpace(r.Match), "required": true},
		}
		return llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{
			"verdict": r.Expert, "confidence": r.ExpertConfidence, "reasoning": r.ExpertReason, "evidence": evidence,
		}))
	})
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
