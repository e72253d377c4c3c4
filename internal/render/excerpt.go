package render

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits of the code excerpt shown with a finding. A finding may cite a
// whole file; the report shows the lines around its anchor (the first
// cited line) and says how much it left out, so a large review's JSON and
// Markdown stay small.
const (
	// MaxExcerptLines is how many lines an excerpt holds at most, context
	// included.
	MaxExcerptLines = 12
	// MaxExcerptLineBytes is how long one excerpt line may be; the rest
	// of a longer line is cut (minified or generated code).
	MaxExcerptLineBytes = 240
)

// excerpt is a finding's capped code with what was cut.
type excerpt struct {
	Lines []CodeLine
	// CutLines counts the lines left out; CutFrom and CutTo bound them.
	CutLines, CutFrom, CutTo int
	// CutBytes counts the bytes cut from the ends of long lines.
	CutBytes int
}

// capCode keeps at most MaxExcerptLines lines of code, the first ones
// (they start just before the anchor), and shortens long lines.
func capCode(code []CodeLine) excerpt {
	var e excerpt
	n := min(len(code), MaxExcerptLines)
	if len(code) > n {
		e.CutLines = len(code) - n
		e.CutFrom, e.CutTo = code[n].Line, code[len(code)-1].Line
	}
	e.Lines = make([]CodeLine, n)
	for i, c := range code[:n] {
		if len(c.Text) > MaxExcerptLineBytes && !alreadyCut(c.Text) {
			cut := MaxExcerptLineBytes
			for cut > 0 && !utf8.RuneStart(c.Text[cut]) {
				cut--
			}
			e.CutBytes += len(c.Text) - cut
			c.Text = c.Text[:cut] + "…"
		}
		e.Lines[i] = c
	}
	return e
}

// note says what capCode left out, or "" when nothing was.
func (e excerpt) note() string {
	s := ""
	if e.CutLines > 0 {
		s = fmt.Sprintf("%s not shown (lines %d–%d)", plural(e.CutLines, "more line"), e.CutFrom, e.CutTo)
	}
	if e.CutBytes > 0 {
		if s != "" {
			s += "; "
		}
		s += fmt.Sprintf("long lines cut after %d bytes (%d bytes not shown)", MaxExcerptLineBytes, e.CutBytes)
	}
	return s
}

// alreadyCut reports whether a line was shortened by an earlier capCode
// (a decoded report), so that it is not cut again.
func alreadyCut(s string) bool {
	return len(s) <= MaxExcerptLineBytes+len("…") && strings.HasSuffix(s, "…")
}
