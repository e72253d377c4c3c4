package report

import (
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// A finding past the end of its file was listed as far_from_change, the
// first rule triage applies; the reader must see the true reason.
func TestOutOfRangeReason(t *testing.T) {
	content := "package a\n\nfunc f() {}\n"
	cases := []struct {
		start, end int
		out        bool
	}{{3, 3, false}, {1, 3, false}, {4, 4, true}, {500, 510, true}, {0, 2, true}, {2, 9, true}}
	for _, c := range cases {
		f := review.Finding{File: "a.go", LineStart: c.start, LineEnd: c.end, Status: review.StatusDropped,
			DropReason: "far_from_change: 497 lines from nearest changed line (window 5)"}
		reason, out := outOfRange(content, f)
		if out != c.out {
			t.Errorf("lines %d-%d: out of range %v, want %v", c.start, c.end, out, c.out)
		}
		if out && !strings.HasPrefix(reason, ReasonLineOutOfRange+": ") || out && !strings.Contains(reason, "has 3 lines") {
			t.Errorf("lines %d-%d: reason %q", c.start, c.end, reason)
		}
	}
}
