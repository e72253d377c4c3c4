package intent

import (
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

func TestEnclosingSymbol(t *testing.T) {
	d := "diff --git a/s.go b/s.go\n--- a/s.go\n+++ b/s.go\n" +
		"@@ -10,3 +10,4 @@ func (s *Server) Start() error {\n x\n+y\n z\n" +
		"@@ -40,2 +41,3 @@ func stop() {\n a\n+b\n"
	noContent := []review.File{{Path: "s.go", Diff: d}}
	for line, want := range map[int]string{5: "", 11: "Server.Start", 30: "Server.Start", 42: "stop"} {
		if got := enclosingSymbol(noContent, "s.go", line); got != want {
			t.Errorf("from hunk headers, line %d: %q, want %q", line, got, want)
		}
	}
	src := "package p\n\nfunc A() {\n\tx()\n}\n"
	withContent := []review.File{{Path: "s.go", Diff: d, Content: &src}}
	if got := enclosingSymbol(withContent, "s.go", 4); got != "A" {
		t.Errorf("from content: %q, want A", got)
	}
	if got := enclosingSymbol(withContent, "other.go", 4); got != "" {
		t.Errorf("unknown file: %q", got)
	}
}
