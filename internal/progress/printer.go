package progress

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
	"unicode/utf8"
)

// Printer writes progress lines. On a terminal it rewrites one line in
// place, cut to the terminal's width so it never wraps (a wrapped line
// cannot be erased with \r and leaves debris); elsewhere (a file, a CI
// log) it writes a plain new line whenever the text changes.
type Printer struct {
	W io.Writer
	// TTY selects the in-place line.
	TTY bool
	// Width returns the terminal's width in columns; nil or ≤ 0 means 80.
	Width func() int

	last    string
	pending bool // an in-place line is on screen, not yet ended
}

// NewPrinter returns a Printer for w, detecting whether it is a terminal
// and how wide.
func NewPrinter(w io.Writer) *Printer {
	p := &Printer{W: w}
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		p.TTY = true
		p.Width = func() int { return termWidth(f) }
	}
	return p
}

// Update shows the progress line after elapsed time.
func (p *Printer) Update(elapsed time.Duration, line string) {
	p.Show(line, fmt.Sprintf("%6s  %s", Duration(elapsed), line))
}

// Show shows text: in place on a terminal, else as a new line when key
// differs from the last one shown.
func (p *Printer) Show(key, text string) {
	if !p.TTY {
		if key != p.last {
			fmt.Fprintln(p.W, text)
		}
		p.last = key
		return
	}
	width := 80
	if p.Width != nil {
		if w := p.Width(); w > 0 {
			width = w
		}
	}
	// One column is kept free: writing the last column makes some
	// terminals wrap at once.
	fmt.Fprintf(p.W, "\r\033[K%s", fit(text, width-1))
	p.last, p.pending = key, true
}

// End ends an in-place line, so what follows starts on a line of its own.
func (p *Printer) End() {
	if p.pending {
		fmt.Fprintln(p.W)
		p.pending = false
	}
}

// fit cuts s to at most width runes, ending a cut line with "…".
func fit(s string, width int) string {
	if width < 1 {
		return ""
	}
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:width-1]) + "…"
}

// Duration renders an elapsed time for people: milliseconds under a
// second (a quick review did not take "0s"), tenths of a second under a
// minute, whole seconds above.
func Duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// termWidth returns the terminal's columns: $COLUMNS when set, else what
// the terminal says, else 80.
func termWidth(f *os.File) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if n := ttyColumns(f); n > 0 {
		return n
	}
	return 80
}
