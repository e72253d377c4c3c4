package redact

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// BenchmarkText redacts ordinary Go source (the clean corpus repeated to
// about 1 MB), the common case: nothing to replace.
func BenchmarkText(b *testing.B) {
	data, err := os.ReadFile("testdata/clean/ordinary.go")
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat(string(data), (1<<20)/len(data)+1)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for range b.N {
		New().Text(text)
	}
}

// BenchmarkTextCold is BenchmarkText with the line caches emptied
// before each round: the cost of text never seen before.
func BenchmarkTextCold(b *testing.B) {
	data, err := os.ReadFile("testdata/clean/ordinary.go")
	if err != nil {
		b.Fatal(err)
	}
	// Distinct lines, as a large change has: a counter makes each copy new.
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		sb.WriteString(strings.ReplaceAll(string(data), "\n", fmt.Sprintf(" // %d\n", i)))
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for range b.N {
		scanCache.reset()
		ruleCache.reset()
		headCache.reset()
		New().Text(text)
	}
}

// BenchmarkRuleHits runs the table's patterns over every line of a text,
// without the line cache: the cost of each line never seen before, before
// the scanner's. Ordinary Go source is rich in secret-looking names;
// generated declarations have none.
func BenchmarkRuleHits(b *testing.B) {
	data, err := os.ReadFile("testdata/clean/ordinary.go")
	if err != nil {
		b.Fatal(err)
	}
	var generated strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&generated, "var v%d = %d // base value\n", i, i*7)
	}
	for _, in := range []struct{ name, text string }{{"ordinary", string(data)}, {"generated", generated.String()}} {
		lines := strings.Split(in.text, "\n")
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.text)))
			for range b.N {
				for _, l := range lines {
					foldedHits(l)
				}
			}
		})
	}
}
