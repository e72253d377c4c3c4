package agent

import (
	"math"
	"strconv"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// verdictRejected heads the list of a verdict's validation problems.
const verdictRejected = "submit_verdict was not accepted:"

// Limits of a submitted verdict.
const (
	maxEvidence   = 20
	minMatchChars = 3 // a shorter quote would match almost anything
)

type evidenceArgs struct {
	Kind      string `json:"kind"`
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Match     string `json:"match"`
	Required  *bool  `json:"required"`
}

type verdictArgs struct {
	Verdict    string         `json:"verdict"`
	Confidence *float64       `json:"confidence"`
	Reasoning  string         `json:"reasoning"`
	Evidence   []evidenceArgs `json:"evidence"`
}

// submission is a verdict that passed validation, before the accept gate.
type submission struct {
	verdict    string
	confidence float64
	reasoning  string
	evidence   []Check
}

// parseVerdict decodes and validates submit_verdict arguments. Every
// problem is listed in the returned tool error so the model can fix them in
// one go.
func parseVerdict(raw string) (submission, error) {
	var a verdictArgs
	if err := decodeArgs(toolSubmitVerdict, raw, &a); err != nil {
		return submission{}, err
	}
	var problems []string
	bad := func(msg string) { problems = append(problems, msg) }

	v := strings.ToLower(strings.TrimSpace(a.Verdict))
	switch v {
	case review.VerdictConfirmed, review.VerdictRefuted, review.VerdictInconclusive:
	default:
		bad("verdict must be confirmed, refuted or inconclusive")
	}
	switch c := a.Confidence; {
	case c == nil:
		bad("confidence is missing")
	case math.IsNaN(*c) || *c < 0 || *c > 1:
		bad("confidence must be between 0 and 1")
	}
	if strings.TrimSpace(a.Reasoning) == "" {
		bad("reasoning is missing")
	}
	if len(a.Evidence) > maxEvidence {
		bad("at most 20 evidence items are allowed")
	}
	checks := make([]Check, 0, len(a.Evidence))
	required := 0
	for i, e := range a.Evidence {
		c, msgs := evidenceCheck(e)
		for _, m := range msgs {
			bad("evidence[" + strconv.Itoa(i) + "]: " + m)
		}
		if c.Required {
			required++
		}
		checks = append(checks, c)
	}
	if v == review.VerdictConfirmed && required == 0 {
		bad("a confirmed verdict needs at least one required evidence item")
	}
	if len(problems) > 0 {
		// One problem a line; each is the runtime's own wording.
		return submission{}, &toolError{msg: verdictRejected + "\n- " + strings.Join(problems, "\n- ")}
	}
	return submission{verdict: v, confidence: *a.Confidence, reasoning: strings.TrimSpace(a.Reasoning), evidence: checks}, nil
}

// evidenceCheck validates one evidence item. Items are required unless they
// say otherwise.
func evidenceCheck(e evidenceArgs) (Check, []string) {
	c := Check{
		Kind: strings.ToLower(strings.TrimSpace(e.Kind)), Path: strings.TrimSpace(e.Path),
		StartLine: e.StartLine, EndLine: e.EndLine, Match: e.Match, Required: e.Required == nil || *e.Required,
	}
	var msgs []string
	needPath := func() {
		if c.Path == "" {
			msgs = append(msgs, c.Kind+" needs a path")
		}
	}
	needMatch := func() {
		if len([]rune(normalizeSpace(c.Match))) < minMatchChars {
			msgs = append(msgs, c.Kind+" needs a match of at least 3 characters")
		}
	}
	switch c.Kind {
	case CheckFileExists:
		needPath()
	case CheckContentContains:
		needPath()
		needMatch()
		switch {
		case c.StartLine < 0 || c.EndLine < 0:
			msgs = append(msgs, "start_line and end_line must be positive")
		case c.EndLine > 0 && c.StartLine == 0:
			msgs = append(msgs, "end_line needs a start_line")
		case c.EndLine > 0 && c.EndLine < c.StartLine:
			msgs = append(msgs, "end_line is before start_line")
		}
	case CheckToolFact:
		needMatch()
	default:
		msgs = append(msgs, "kind must be file_exists, content_contains or tool_fact")
	}
	return c, msgs
}
