package redact

import (
	"strings"
	"testing"
)

// FuzzLinesKept checks that redaction never adds or removes a line and
// never leaves a second pass anything to do.
func FuzzLinesKept(f *testing.F) {
	for _, c := range ruleCases {
		f.Add(c.in)
	}
	f.Add("+-----BEGIN RSA PRIVATE KEY-----\n+MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n password: |\n   abc123XYZ!!\n")
	f.Fuzz(func(t *testing.T, in string) {
		r := New()
		for _, mode := range []func(string) string{r.Text, r.Diff} {
			out := mode(in)
			if strings.Count(out, "\n") != strings.Count(in, "\n") {
				t.Fatalf("line count changed:\n%q\n%q", in, out)
			}
			if again := mode(out); again != out {
				t.Fatalf("second pass changed the text:\n%q\n%q", out, again)
			}
		}
		// The cheap tests before the patterns change no answer.
		for _, l := range strings.Split(in, "\n") {
			if got, want := encodedCandidate(l), encodedByPattern(l); got != want {
				t.Fatalf("encodedCandidate(%q) = %v, the pattern says %v", l, got, want)
			}
			low := strings.ToLower(l)
			found := rulesHinted.find(low)
			for i, rule := range Rules {
				if got, want := rulesHinted.tried(i, found), hinted(low, rule.Hints); got != want {
					t.Fatalf("rule %s on %q: tried %v, its hints say %v", rule.Kind, l, got, want)
				}
			}
		}
	})
}
