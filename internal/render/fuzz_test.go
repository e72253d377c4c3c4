package render

import (
	"strings"
	"testing"
)

// FuzzBlock checks that no description can leave a code fence open or start
// a heading in the report.
func FuzzBlock(f *testing.F) {
	for _, s := range []string{"", "# h", "```\n ```", "```\n    ```\n#x", "```a`b\n#", "```go\nx", "````\n```\n", "a\n===\n", "~~~\n<x>", "`<a>` <b>", "\r\n#\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := block(s)
		open := ""
		for _, line := range strings.Split(out, "\n") {
			if open != "" {
				if closesFence(line, open) {
					open = ""
				}
				continue
			}
			if fence := openingFence(line); fence != "" {
				open = fence
				continue
			}
			if strings.HasPrefix(strings.TrimLeft(line, " "), "#") {
				t.Fatalf("block(%q) has a heading line %q", s, line)
			}
		}
		if open != "" {
			t.Fatalf("block(%q) leaves fence %q open:\n%s", s, open, out)
		}
	})
}
