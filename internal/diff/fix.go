package diff

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// FixHunk is one hunk of a proposed fix: the lines it replaces in the head
// version (context and removed lines, from OldStart) and the lines that
// replace them (context and added lines).
type FixHunk struct {
	OldStart int
	Old, New []string
}

var fixHunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// errNoHunk is the error of a fix without any hunk.
var errNoHunk = errors.New("no @@ hunk")

// ParseFix reads a proposed fix written as a unified diff of one file
// (---/+++ headers optional). It checks the hunks' line counts.
func ParseFix(text string) ([]FixHunk, error) {
	var hunks []FixHunk
	var cur *FixHunk
	wantOld, wantNew := 0, 0
	closeHunk := func() error {
		if cur != nil && (len(cur.Old) != wantOld || len(cur.New) != wantNew) {
			return fmt.Errorf("hunk at line %d: %d/%d lines, header says %d/%d", cur.OldStart, len(cur.Old), len(cur.New), wantOld, wantNew)
		}
		return nil
	}
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if m := fixHunkHeader.FindStringSubmatch(line); m != nil {
			if err := closeHunk(); err != nil {
				return nil, err
			}
			start, _ := strconv.Atoi(m[1])
			wantOld, wantNew = count(m[2]), count(m[4])
			hunks = append(hunks, FixHunk{OldStart: start})
			cur = &hunks[len(hunks)-1]
			continue
		}
		if cur == nil {
			continue // headers and prose before the first hunk
		}
		switch {
		case strings.HasPrefix(line, "-"):
			cur.Old = append(cur.Old, line[1:])
		case strings.HasPrefix(line, "+"):
			cur.New = append(cur.New, line[1:])
		case strings.HasPrefix(line, " "), line == "":
			text := strings.TrimPrefix(line, " ")
			cur.Old, cur.New = append(cur.Old, text), append(cur.New, text)
		case strings.HasPrefix(line, `\`):
		default:
			return nil, fmt.Errorf("unexpected line %q in hunk", line)
		}
	}
	if err := closeHunk(); err != nil {
		return nil, err
	}
	if len(hunks) == 0 {
		return nil, errNoHunk
	}
	return hunks, nil
}

func count(s string) int {
	if s == "" {
		return 1
	}
	n, _ := strconv.Atoi(s)
	return n
}

// Applies reports whether every hunk's old lines are the head version's
// lines at its position (trailing whitespace ignored).
func Applies(hunks []FixHunk, head []string) bool {
	for _, h := range hunks {
		if h.OldStart < 1 || h.OldStart-1+len(h.Old) > len(head) {
			return false
		}
		for i, l := range h.Old {
			if strings.TrimRight(l, " \t\r") != strings.TrimRight(head[h.OldStart-1+i], " \t\r") {
				return false
			}
		}
	}
	return true
}
