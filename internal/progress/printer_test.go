package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// On a terminal every in-place line fits its width: a line that wraps
// cannot be erased with \r and leaves debris.
func TestPrinterFitsTerminalWidth(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	p := &Printer{W: &b, TTY: true, Width: func() int { return 40 }}
	long := "intent 3/3 · verify 4/5 (1 failed) · expert 2/9 · eval – · report –  [eval: concurrency 1✓ 0✗ 0?]"
	p.Update(1500*time.Millisecond, long)
	p.Update(2*time.Second, "intent 3/3")
	p.End()
	out := b.String()
	for _, seg := range strings.Split(strings.TrimSuffix(out, "\n"), "\r\033[K")[1:] {
		if n := utf8.RuneCountInString(seg); n > 39 {
			t.Errorf("line of %d columns on a 40-column terminal: %q", n, seg)
		}
	}
	if !strings.Contains(out, "…") || !strings.HasSuffix(out, "intent 3/3\n") {
		t.Errorf("output: %q", out)
	}
}

// Elsewhere (CI logs, files) lines are plain: no carriage returns or
// escape sequences, one line per change.
func TestPrinterPlainLinesWhenNotATerminal(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	p := NewPrinter(&b)
	p.Update(300*time.Millisecond, "intent 0/3")
	p.Update(500*time.Millisecond, "intent 0/3")
	p.Update(2*time.Second, "intent 3/3")
	p.End()
	if want := " 300ms  intent 0/3\n    2s  intent 3/3\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestDurationUnderASecondShowsMilliseconds(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0: "0ms", 420 * time.Millisecond: "420ms", 1520 * time.Millisecond: "1.5s", 192 * time.Second: "3m12s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}
