package agent

import (
	"encoding/json"
	"errors"
	"strings"
)

// Bounds of the search for a verdict in a reply's text.
const (
	maxVerdictTextBytes = 64 << 10 // text searched
	maxObjectStarts     = 256      // opening braces tried per pass
)

// textVerdict finds a verdict written as a JSON object in the text of a
// reply, as the model is asked to do in the forced summarize rounds. The
// bodies of ``` fenced blocks are searched first, then the whole text; in
// each, every balanced {...} that decodes to an object with a "verdict"
// field is a candidate, in order. The first candidate that passes the same
// validation as submit_verdict arguments wins. found reports whether there
// was a candidate at all; when none passes, err lists the problems of the
// first one.
func textVerdict(text string) (sub submission, found bool, err error) {
	text = cutUTF8(text, maxVerdictTextBytes)
	var first error
	for _, area := range append(fencedBlocks(text), text) {
		for _, obj := range verdictObjects(area) {
			s, perr := parseVerdict(obj)
			if perr == nil {
				return s, true, nil
			}
			if first == nil {
				first = perr
			}
		}
	}
	return submission{}, first != nil, first
}

// fencedBlocks returns the contents of the ``` fenced blocks of text, info
// string included; an unclosed fence runs to the end of the text.
func fencedBlocks(text string) []string {
	parts := strings.Split(text, "```")
	var blocks []string
	for i := 1; i < len(parts); i += 2 {
		blocks = append(blocks, parts[i])
	}
	return blocks
}

// verdictObjects returns, in order of their opening brace, the balanced
// {...} spans of s that are meant as verdicts: JSON objects with a
// "verdict" field (matched case-insensitively, as decoding does), and spans
// that are not valid JSON but name such a field, so that validation can say
// what is wrong with them. A span that is neither is searched further from
// its next brace, so a verdict wrapped in another object is found too.
func verdictObjects(s string) []string {
	var out []string
	for i, tries := 0, 0; i < len(s) && tries < maxObjectStarts; i++ {
		j := strings.IndexByte(s[i:], '{')
		if j < 0 {
			break
		}
		i += j
		tries++
		obj, ok := balancedObject(s[i:])
		if !ok || !meantAsVerdict(obj) {
			continue
		}
		out = append(out, obj)
		i += len(obj) - 1
	}
	return out
}

// balancedObject returns the prefix of s, which starts with '{', up to the
// matching '}', ignoring braces inside JSON strings. ok is false when the
// braces never balance.
func balancedObject(s string) (obj string, ok bool) {
	depth := 0
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return s[:i+1], true
			}
		}
	}
	return "", false
}

// meantAsVerdict reports whether obj is a JSON object with a verdict field,
// or broken JSON that names one.
func meantAsVerdict(obj string) bool {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(obj), &fields); err != nil {
		var syntaxErr *json.SyntaxError
		return errors.As(err, &syntaxErr) && strings.Contains(strings.ToLower(obj), `"verdict"`)
	}
	for k := range fields {
		if strings.EqualFold(k, "verdict") {
			return true
		}
	}
	return false
}
