package diff

import "testing"

func TestUnquote(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{`"plain"`, "plain", false},
		{`"sp\303\244ce.txt"`, "späce.txt", false},
		{`"tab\tnew\nline"`, "tab\tnew\nline", false},
		{`"q\"uote"`, `q"uote`, false},
		{`"back\\slash"`, `back\slash`, false},
		{`"\a\b\v\f\r"`, "\a\b\v\f\r", false},
		{`"\001\177"`, "\x01\x7f", false},
		{`"open`, "", true},
		{`"bad\q"`, "", true},
		{`"short\30"`, "", true},
		{`"octal\400"`, "", true},
		{`"trail\`, "", true},
		{`"x" y`, "", true},
		{`noquote`, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := unquoteAll(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("unquoteAll(%s) error = %v, want error %v", tc.in, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("unquoteAll(%s) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestQuoteRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"plain/path.go", "plain/path.go"},
		{"with space.go", "with space.go"},
		{"späce", `"sp\303\244ce"`},
		{"a\tb", `"a\tb"`},
		{`q"b\s`, `"q\"b\\s"`},
		{"\x01\x7f", `"\001\177"`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			q := quotePath(tc.in)
			if q != tc.want {
				t.Errorf("quotePath(%q) = %s, want %s", tc.in, q, tc.want)
			}
			if q == tc.in {
				return
			}
			back, err := unquoteAll(q)
			if err != nil || back != tc.in {
				t.Errorf("unquoteAll(%s) = %q, %v, want %q", q, back, err, tc.in)
			}
		})
	}
}

func TestSplitGitPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in        string
		a, b      string
		ambiguous bool
		wantErr   bool
	}{
		{"a/x b/x", "a/x", "b/x", false, false},
		{"a/x y b/x y", "a/x y", "b/x y", false, false},
		{"x y x y", "x y", "x y", false, false},
		{"a/old b/new", "a/old", "b/new", false, false},
		{"a/old one b/new one", "a/old one", "b/new one", false, false},
		{`"a/\303\244" "b/\303\244"`, "a/ä", "b/ä", false, false},
		{`a/plain "b/q\"x"`, "a/plain", `b/q"x`, false, false},
		{`"a/q\"x" b/plain`, `a/q"x`, "b/plain", false, false},
		{"a/x b/y b/z", "a/x", "b/y b/z", true, false},
		{"nospace", "", "", false, true},
		{`"a/x"b/x`, "", "", false, true},
		{`"a/x" `, "", "", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			a, b, amb, err := splitGitPaths(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("splitGitPaths(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			}
			if a != tc.a || b != tc.b || amb != tc.ambiguous {
				t.Errorf("splitGitPaths(%q) = %q, %q, %v, want %q, %q, %v", tc.in, a, b, amb, tc.a, tc.b, tc.ambiguous)
			}
		})
	}
}
