package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// maxCandidates bounds how many '{' positions ExtractJSON tries, so that a
// long reply full of braces costs linear time.
const maxCandidates = 1000

// ExtractJSON finds the JSON document in an LLM reply. It accepts, in order:
// the whole reply as JSON; the contents of a ``` or ```json fenced block;
// the first balanced {...} in the text that parses. Trailing commas before
// a closing brace or bracket are tolerated and removed. The returned bytes
// are valid JSON.
func ExtractJSON(s string) ([]byte, error) {
	s = strings.TrimPrefix(s, "\ufeff")
	if b, ok := asJSON(s); ok {
		return b, nil
	}
	for _, block := range fencedBlocks(s) {
		if b, ok := asJSON(block); ok {
			return b, nil
		}
	}
	var firstErr error
	tried := 0
	for i := 0; i < len(s) && tried < maxCandidates; i++ {
		if s[i] != '{' {
			continue
		}
		end, ok := balancedEnd(s, i)
		if !ok {
			if firstErr == nil {
				firstErr = fmt.Errorf("JSON object at offset %d is never closed", i)
			}
			continue
		}
		tried++
		if b, ok := asJSON(s[i:end]); ok {
			return b, nil
		}
		if firstErr == nil {
			var v any
			err := json.Unmarshal([]byte(stripTrailingCommas(s[i:end])), &v)
			firstErr = fmt.Errorf("JSON object at offset %d is malformed: %w", i, err)
		}
	}
	if firstErr != nil {
		return nil, fmt.Errorf("extract JSON from reply: %w", firstErr)
	}
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("extract JSON from reply: reply is empty")
	}
	return nil, errors.New("extract JSON from reply: no JSON object found")
}

// asJSON returns t (trimmed, trailing commas removed if needed) when it is
// a valid JSON document.
func asJSON(t string) ([]byte, bool) {
	t = strings.TrimSpace(t)
	if t == "" {
		return nil, false
	}
	if json.Valid([]byte(t)) {
		return []byte(t), true
	}
	if fixed := stripTrailingCommas(t); fixed != t && json.Valid([]byte(fixed)) {
		return []byte(fixed), true
	}
	return nil, false
}

// fencedBlocks returns the contents of the ``` fenced blocks in s, in
// order. An info string after the opening fence (such as "json") is skipped;
// an unclosed fence runs to the end of s.
func fencedBlocks(s string) []string {
	var blocks []string
	for {
		start := strings.Index(s, "```")
		if start < 0 {
			return blocks
		}
		s = s[start+3:]
		if nl := strings.IndexByte(s, '\n'); nl >= 0 && !strings.ContainsAny(s[:nl], "{[") {
			s = s[nl+1:]
		}
		end := strings.Index(s, "```")
		if end < 0 {
			return append(blocks, s)
		}
		blocks = append(blocks, s[:end])
		s = s[end+3:]
	}
}

// balancedEnd returns the index just past the brace or bracket that closes
// the one at s[start], skipping over JSON strings.
func balancedEnd(s string, start int) (int, bool) {
	depth := 0
	inString, escaped := false, false
	for i := start; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
	}
	return 0, false
}

// stripTrailingCommas removes commas that are followed, after optional
// whitespace, by '}' or ']', leaving string contents alone.
func stripTrailingCommas(s string) string {
	if !strings.Contains(s, ",") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			b.WriteByte(c)
			continue
		}
		if c == '"' {
			inString = true
		}
		if c == ',' {
			j := i + 1
			for j < len(s) && strings.IndexByte(" \t\r\n", s[j]) >= 0 {
				j++
			}
			if j < len(s) && (s[j] == '}' || s[j] == ']') {
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}
