package fingerprint

import "testing"

func TestNormaliseClaim(t *testing.T) {
	cases := map[string]string{
		"The `buf` slice may be nil on line 42.":             "the buf slice may be nil on",
		"  THE   buf slice\tmay be nil on lines 7-9 ":        "the buf slice may be nil on",
		`Calling "Close" twice (see L12) panics`:             "calling close twice (see ) panics",
		"read.go:120:4 returns before unlock":                "read.go returns before unlock",
		"\u201cerr\u201d is ignored, at line 3 and 4; oops!": "err is ignored at oops!",
		"index i+1 may exceed len(s)":                        "index i+1 may exceed len(s)",
	}
	for in, want := range cases {
		if got := NormaliseClaim(in); got != want {
			t.Errorf("NormaliseClaim(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOfStableAcrossMovedLines(t *testing.T) {
	a := Of("pkg/read.go", "Reader.Next", "robustness", "`buf` may be nil at line 40 when the reader is closed.")
	b := Of("./pkg/read.go", "Reader.Next", "Robustness", "`buf` may be nil at line 57 when the reader is closed")
	if a != b {
		t.Fatalf("same finding on moved lines: %s != %s", a, b)
	}
	if len(a) != 32 {
		t.Fatalf("fingerprint %q is not 32 hex digits", a)
	}
}

func TestOfDistinguishesParts(t *testing.T) {
	base := Of("a.go", "F", "robustness", "`buf` may be nil")
	for name, other := range map[string]string{
		"claim":      Of("a.go", "F", "robustness", "`buf` may overflow"),
		"identifier": Of("a.go", "F", "robustness", "`buf2` may be nil"),
		"path":       Of("b.go", "F", "robustness", "`buf` may be nil"),
		"symbol":     Of("a.go", "G", "robustness", "`buf` may be nil"),
		"risk":       Of("a.go", "F", "concurrency", "`buf` may be nil"),
		// Parts are separated, so shifting text between them changes the result.
		"boundary": Of("a.go", "Fr", "obustness", "`buf` may be nil"),
	} {
		if other == base {
			t.Errorf("different %s gives the same fingerprint %s", name, base)
		}
	}
}
