package prompts

import (
	"fmt"
	"strings"
	"testing"
)

// hunkOf builds a one-file, one-hunk unified diff from body lines that
// already carry their markers ("+x", "-y", " z"), computing the header's
// counts.
func hunkOf(body ...string) string {
	oldN, newN := 0, 0
	for _, l := range body {
		switch {
		case strings.HasPrefix(l, "+"):
			newN++
		case strings.HasPrefix(l, "-"):
			oldN++
		default:
			oldN++
			newN++
		}
	}
	return fmt.Sprintf("--- a/file\n+++ b/file\n@@ -10,%d +10,%d @@\n%s\n", oldN, newN, strings.Join(body, "\n"))
}

// mustLoad loads the embedded prompt set.
func mustLoad(t *testing.T) *Set {
	t.Helper()
	s, err := Load("")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s
}
