package llmfake

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// DefaultMarker is the text Markers looks for in added lines.
const DefaultMarker = "BUG:"

// fileHeading is how the intent prompt opens each file: "### File: PATH (…".
var fileHeading = regexp.MustCompile(`^### File: (.+) \(`)

// numberedAdded is an added line of a diff on new-side line numbers, as
// stages show it: "  12 + text".
var numberedAdded = regexp.MustCompile(`^\s*(\d+) \+ (.*)$`)

// markerFinding finds the location a Markers finding names in its
// description.
var markerFinding = regexp.MustCompile(`marker at (.+?):(\d+): ([^\n]*)`)

// Markers is a reviewer for drills: intent reports a finding at every added
// line that contains marker (DefaultMarker when empty), verify anchors it,
// the expert reads the line and confirms it with evidence, eval confirms.
// Requests it does not recognise are answered from their schema.
func Markers(marker string) Handler { return MarkersVerdict(marker, "confirmed") }

// MarkersVerdict is Markers whose expert submits verdict (confirmed,
// refuted, inconclusive, …) instead of confirming: a drill of how the
// fleet treats findings the expert could not establish.
func MarkersVerdict(marker, verdict string) Handler {
	if verdict == "" {
		verdict = "confirmed"
	}
	if marker == "" {
		marker = DefaultMarker
	}
	return func(_ context.Context, req openai.ChatCompletionRequest) Reply {
		switch SchemaName(req) {
		case "reviewfleet_intent":
			return JSON(map[string]any{"findings": markerFindings(LastUser(req), marker)})
		case "reviewfleet_verify":
			return JSON(map[string]any{"anchored": true, "evidence": "The cited line carries the marker " + marker, "adjusted_confidence": 0.9})
		case "reviewfleet_eval":
			return JSON(map[string]any{"claim": "If the finding holds, the cited line carries " + marker,
				"counter_evidence": "None: the marker is on the cited line.", "verdict": "confirmed",
				"reason": "The line is marked as a defect.", "final_confidence": 0.9})
		}
		if len(req.Tools) > 0 {
			return markerExpert(req, marker, verdict)
		}
		return FromSchema(req)
	}
}

// markerFindings lists a finding for each marked added line of the prompt.
func markerFindings(prompt, marker string) []map[string]any {
	findings := []map[string]any{}
	file := ""
	for _, line := range strings.Split(prompt, "\n") {
		if m := fileHeading.FindStringSubmatch(line); m != nil {
			file = m[1]
			continue
		}
		m := numberedAdded.FindStringSubmatch(line)
		if m == nil || file == "" || !strings.Contains(m[2], marker) {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		findings = append(findings, map[string]any{
			"risk_type": "robustness", "file": file, "line_start": n, "line_end": n,
			"description": fmt.Sprintf("marker at %s:%d: %s", file, n, strings.TrimSpace(m[2])),
			"suggestion":  "Fix what the " + marker + " comment describes.",
			"quote":       strings.TrimSpace(m[2]), "fix": "",
			"severity": "high", "confidence": 0.9,
		})
	}
	return findings
}

// markerExpert reads the marked line, then submits a confirmed verdict that
// quotes the whole line, as the accept gate wants of evidence.
func markerExpert(req openai.ChatCompletionRequest, marker, verdict string) Reply {
	var text strings.Builder
	toolResults := 0
	for _, m := range req.Messages {
		text.WriteString(m.Content)
		text.WriteByte('\n')
		if m.Role == openai.ChatMessageRoleTool {
			toolResults++
		}
	}
	m := markerFinding.FindStringSubmatch(text.String())
	if m == nil {
		return FromSchema(req)
	}
	file := m[1]
	line, _ := strconv.Atoi(m[2])
	quoted := strings.TrimSpace(m[3])
	if toolResults == 0 {
		return Tools(ToolCall("read_file", map[string]any{"path": file, "start_line": max(1, line-3), "end_line": line + 3}))
	}
	return Tools(ToolCall("submit_verdict", map[string]any{
		"verdict": verdict, "confidence": 0.9, "reasoning": "The line carries the " + marker + " marker.",
		"evidence": []map[string]any{
			{"kind": "file_exists", "path": file, "required": true},
			{"kind": "content_contains", "path": file, "start_line": line, "end_line": line, "match": quoted, "required": true},
		},
	}))
}
