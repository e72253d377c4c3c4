package agent

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncateResult(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		limit int
		want  string
	}{
		{"short", 10, "short"},
		{"0123456789abc", 10, "0123456789\n[truncated: 3 more bytes not shown; narrow the request]"},
		{"ééé", 3, "é\n[truncated: 4 more bytes not shown; narrow the request]"},
	}
	for _, tt := range tests {
		got := truncateResult(tt.in, tt.limit)
		if got != tt.want {
			t.Errorf("truncateResult(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("truncateResult(%q, %d) is not valid UTF-8", tt.in, tt.limit)
		}
	}
}

func TestNormalizeSpace(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"  a\t\tb\n\n c ", "a b c"},
		{"", ""},
		{"\n\t ", ""},
		{"x", "x"},
	}
	for _, tt := range tests {
		if got := normalizeSpace(tt.in); got != tt.want {
			t.Errorf("normalizeSpace(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCanonicalArgs(t *testing.T) {
	t.Parallel()
	tests := []struct{ a, b string }{
		{`{"path":"a","start_line":1}`, `{ "start_line": 1, "path": "a" }`},
		{`{"pattern":"<x>&"}`, `{"pattern": "<x>&"}`},
	}
	for _, tt := range tests {
		if ca, cb := canonicalArgs(tt.a), canonicalArgs(tt.b); ca != cb {
			t.Errorf("canonicalArgs differ: %q vs %q", ca, cb)
		}
	}
	if canonicalArgs(`{"a":1}`) == canonicalArgs(`{"a":2}`) {
		t.Error("different arguments canonicalise equal")
	}
	if got := canonicalArgs(" {bad "); got != "{bad" {
		t.Errorf("invalid JSON canonicalised to %q", got)
	}
	if !strings.Contains(canonicalArgs(`{"n": 1.50}`), "1.50") {
		t.Error("numbers are not kept verbatim")
	}
}
