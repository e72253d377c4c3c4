package redact

import (
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
