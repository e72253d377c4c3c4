package manager

import "testing"

func TestDistanceToChange(t *testing.T) {
	t.Parallel()
	lines := []int{10, 20, 30}
	tests := []struct {
		name       string
		start, end int
		lines      []int
		want       int
		wantOK     bool
	}{
		{"on a changed line", 20, 20, lines, 0, true},
		{"range contains a changed line", 15, 25, lines, 0, true},
		{"before the first line", 3, 4, lines, 6, true},
		{"after the last line", 36, 40, lines, 6, true},
		{"between, nearer the previous", 22, 23, lines, 2, true},
		{"between, nearer the next", 26, 27, lines, 3, true},
		{"single changed line", 1, 1, []int{100}, 99, true},
		{"no changed lines", 1, 1, nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := distanceToChange(tt.start, tt.end, tt.lines)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("distanceToChange(%d, %d, %v) = %d, %v; want %d, %v", tt.start, tt.end, tt.lines, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestRangeGap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a1, a2, b1, b2, want int
	}{
		{1, 5, 3, 8, 0},
		{1, 5, 5, 8, 0},
		{1, 5, 6, 8, 1},
		{10, 12, 1, 7, 3},
		{1, 1, 1, 1, 0},
	}
	for _, tt := range tests {
		if got := rangeGap(tt.a1, tt.a2, tt.b1, tt.b2); got != tt.want {
			t.Errorf("rangeGap(%d-%d, %d-%d) = %d, want %d", tt.a1, tt.a2, tt.b1, tt.b2, got, tt.want)
		}
	}
}

func TestCleanPath(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"a/b.go":    "a/b.go",
		"./a/b.go":  "a/b.go",
		"/a/b.go":   "a/b.go",
		"a//b/../c": "a/c",
		" a.go ":    "a.go",
		"":          "",
		".":         "",
		"/":         "",
	}
	for in, want := range tests {
		if got := cleanPath(in); got != want {
			t.Errorf("cleanPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReasonCode(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"far_from_change: 42 lines from nearest changed line (window 5)": ReasonFarFromChange,
		"duplicate_of:12":    ReasonDuplicateOf,
		"file_not_in_change": ReasonFileNotInChange,
		"":                   "",
	}
	for in, want := range tests {
		if got := ReasonCode(in); got != want {
			t.Errorf("ReasonCode(%q) = %q, want %q", in, got, want)
		}
	}
}
