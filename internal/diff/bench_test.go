package diff

import (
	"fmt"
	"strings"
	"testing"
)

// benchDiff builds a git diff of about size bytes: many files, each with a
// few hunks of code-like lines.
func benchDiff(size int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "diff --git a/pkg/mod%d/file%d.go b/pkg/mod%d/file%d.go\n", i%7, i, i%7, i)
		fmt.Fprintf(&b, "index %07x..%07x 100644\n--- a/pkg/mod%d/file%d.go\n+++ b/pkg/mod%d/file%d.go\n", i, i+1, i%7, i, i%7, i)
		start := 1
		for h := 0; h < 4; h++ {
			fmt.Fprintf(&b, "@@ -%d,10 +%d,12 @@ func handler%d(ctx context.Context) error {\n", start, start+2*h, h)
			for l := 0; l < 4; l++ {
				fmt.Fprintf(&b, " \tvalue%d := compute(ctx, %d)\n", l, l)
			}
			b.WriteString("-\treturn nil\n-\t// old comment\n")
			b.WriteString("+\tif err := check(ctx); err != nil {\n+\t\treturn fmt.Errorf(\"check: %w\", err)\n+\t}\n+\treturn nil\n")
			for l := 0; l < 4; l++ {
				fmt.Fprintf(&b, " \tlog.Printf(\"step %d\")\n", l)
			}
			start += 40
		}
	}
	return []byte(b.String())
}

func BenchmarkParse(b *testing.B) {
	data := benchDiff(1 << 20)
	files, err := Parse(data)
	if err != nil {
		b.Fatalf("Parse: %v", err)
	}
	b.Logf("input %d bytes, %d files", len(data), len(files))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
