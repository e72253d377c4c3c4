package manager

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTokenise checks the shape of every token set: sorted, no repeats, no
// stop words, no one-character tokens, no upper case.
func FuzzTokenise(f *testing.F) {
	for _, s := range []string{"", "The map IS read", "空指针 nil", "a_b c-d", "\xff\xfe", "ǅ ǈ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tokens := tokenise(s)
		if !slices.IsSorted(tokens) || len(slices.Compact(slices.Clone(tokens))) != len(tokens) {
			t.Fatalf("tokenise(%q) = %q: not a sorted set", s, tokens)
		}
		for _, tok := range tokens {
			if utf8.RuneCountInString(tok) < 2 {
				t.Fatalf("tokenise(%q) kept short token %q", s, tok)
			}
			if _, stop := stopWords[tok]; stop {
				t.Fatalf("tokenise(%q) kept stop word %q", s, tok)
			}
			if tok != strings.ToLower(tok) && !strings.ContainsRune(tok, utf8.RuneError) {
				t.Fatalf("tokenise(%q) kept upper case in %q", s, tok)
			}
		}
		if j := jaccard(tokens, tokens); len(tokens) > 0 && j != 1 {
			t.Fatalf("jaccard of a set with itself = %v", j)
		}
	})
}
