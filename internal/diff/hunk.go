package diff

import (
	"fmt"
	"strconv"
	"strings"
)

// maxLineNo bounds line numbers and counts in hunk headers so that sums of
// them cannot overflow.
const maxLineNo = 1<<31 - 1

// parseHunks reads the hunks that must follow a ---/+++ pair.
func (p *parser) parseHunks(f *File) error {
	lastOld, lastNew := 0, 0 // highest line numbers used so far
	for {
		line, _, ok := p.peek()
		if !ok || !strings.HasPrefix(line, "@@") {
			break
		}
		p.skip()
		h, err := parseHunkHeader(line)
		if err != nil {
			return errorf(p.line, "hunk header %s: %v", excerpt(line), err)
		}
		if (h.OldCount > 0 && h.OldStart <= lastOld) || h.OldStart < lastOld ||
			(h.NewCount > 0 && h.NewStart <= lastNew) || h.NewStart < lastNew {
			return errorf(p.line, "hunk header %s overlaps or comes before the previous hunk", excerpt(line))
		}
		if err := p.parseHunkBody(f, &h, p.line); err != nil {
			return err
		}
		if h.OldCount > 0 {
			lastOld = h.OldStart + h.OldCount - 1
		}
		if h.NewCount > 0 {
			lastNew = h.NewStart + h.NewCount - 1
		}
		f.Hunks = append(f.Hunks, h)
	}
	if len(f.Hunks) == 0 {
		line, _, ok := p.peek()
		if !ok {
			return errorf(p.line+1, "input ends after the +++ line; a hunk header was expected")
		}
		return errorf(p.line+1, "expected a hunk header after the +++ line, got %s", excerpt(line))
	}
	// A change line right after the last hunk means the body was longer than
	// its header said, unless it starts the next file or a mail signature.
	line, _, ok := p.peek()
	if ok && line != "" && strings.ContainsRune("+- ", rune(line[0])) && line != "-- " && line != "--" {
		save, saveLine := p.pos, p.line
		p.skip()
		nextFile := strings.HasPrefix(line, "--- ") && p.nextHasPrefix("+++ ")
		p.pos, p.line = save, saveLine
		if !nextFile {
			last := f.Hunks[len(f.Hunks)-1]
			return errorf(p.line+1, "hunk body is longer than its header %s says: extra line %s",
				headerText(&last), excerpt(line))
		}
	}
	return nil
}

// parseHunkHeader parses "@@ -a[,b] +c[,d] @@[ section]".
func parseHunkHeader(line string) (Hunk, error) {
	var h Hunk
	rest, ok := strings.CutPrefix(line, "@@ -")
	if !ok {
		return h, fmt.Errorf("want \"@@ -\" at the start")
	}
	oldRange, rest, ok := strings.Cut(rest, " +")
	if !ok {
		return h, fmt.Errorf("no new-side range")
	}
	newRange, rest, ok := strings.Cut(rest, " @@")
	if !ok {
		return h, fmt.Errorf("no closing @@")
	}
	var err error
	if h.OldStart, h.OldCount, err = parseRange(oldRange); err != nil {
		return h, fmt.Errorf("old range %q: %w", oldRange, err)
	}
	if h.NewStart, h.NewCount, err = parseRange(newRange); err != nil {
		return h, fmt.Errorf("new range %q: %w", newRange, err)
	}
	// A carriage return ending the section is line-ending noise (a CRLF
	// header line with a stray extra \r), not part of the function name.
	h.Section = strings.TrimRight(strings.TrimPrefix(rest, " "), "\r")
	return h, nil
}

// parseRange parses "start[,count]"; an omitted count means 1.
func parseRange(s string) (start, count int, err error) {
	startText, countText, hasCount := strings.Cut(s, ",")
	if start, err = parseNumber(startText); err != nil {
		return 0, 0, err
	}
	count = 1
	if hasCount {
		if count, err = parseNumber(countText); err != nil {
			return 0, 0, err
		}
	}
	if count > 0 && start == 0 {
		return 0, 0, fmt.Errorf("range of %d lines starts at line 0", count)
	}
	if start+count-1 > maxLineNo {
		return 0, 0, fmt.Errorf("range ends past line %d", maxLineNo)
	}
	return start, count, nil
}

// parseNumber parses a non-negative decimal number of digits only.
func parseNumber(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("missing number")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%q is not a number", s)
		}
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int(n), nil
}

// parseHunkBody reads the body of h, whose header was on line headerLine,
// numbering each line.
func (p *parser) parseHunkBody(f *File, h *Hunk, headerLine int) error {
	oldLeft, newLeft := h.OldCount, h.NewCount
	oldNo, newNo := h.OldStart, h.NewStart
	// Every body line takes at least two bytes but the last, which bounds
	// the allocation whatever the header claims.
	if n := min(oldLeft+newLeft, (len(p.src)-p.pos)/2+1); n > 0 {
		h.Lines = make([]Line, 0, n)
	}
	short := func(got string) error {
		return errorf(p.line+1, "hunk body is shorter than its header %s (line %d) says: %d old and %d new lines missing, got %s",
			headerText(h), headerLine, oldLeft, newLeft, got)
	}
	for oldLeft > 0 || newLeft > 0 {
		line, cr, ok := p.peek()
		if !ok {
			return short("end of input")
		}
		kind := Context
		text := line
		if line != "" {
			kind, text = LineKind(line[0]), line[1:]
		}
		switch kind {
		case '\\':
			if len(h.Lines) == 0 {
				return errorf(p.line+1, "%s marker with no line before it", excerpt(line))
			}
			h.Lines[len(h.Lines)-1].NoNewline = true
			p.skip()
			continue
		case Context:
			if oldLeft == 0 || newLeft == 0 {
				return short(excerpt(line))
			}
			h.Lines = append(h.Lines, Line{Kind: Context, Text: text, OldNo: oldNo, NewNo: newNo})
			oldNo++
			newNo++
			oldLeft--
			newLeft--
		case Deleted:
			if oldLeft == 0 {
				return errorf(p.line+1, "hunk has more deleted or context lines than its header %s (line %d) says",
					headerText(h), headerLine)
			}
			h.Lines = append(h.Lines, Line{Kind: Deleted, Text: text, OldNo: oldNo})
			oldNo++
			oldLeft--
		case Added:
			if newLeft == 0 {
				return errorf(p.line+1, "hunk has more added or context lines than its header %s (line %d) says",
					headerText(h), headerLine)
			}
			h.Lines = append(h.Lines, Line{Kind: Added, Text: text, NewNo: newNo})
			newNo++
			newLeft--
		default:
			return short(excerpt(line))
		}
		if cr {
			f.CRLF = true
		}
		p.skip()
	}
	if line, _, ok := p.peek(); ok && strings.HasPrefix(line, `\`) && len(h.Lines) > 0 {
		h.Lines[len(h.Lines)-1].NoNewline = true
		p.skip()
	}
	return nil
}

// headerText renders the ranges of h as a hunk header, for messages and Text.
func headerText(h *Hunk) string {
	return "@@ -" + strconv.Itoa(h.OldStart) + "," + strconv.Itoa(h.OldCount) +
		" +" + strconv.Itoa(h.NewStart) + "," + strconv.Itoa(h.NewCount) + " @@"
}
