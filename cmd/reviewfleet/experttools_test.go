package main

import "testing"

func TestFormatToolCounts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   map[string]map[string]int
		want string
	}{
		{nil, "none"},
		{map[string]map[string]int{"grep": {}}, "none"},
		{map[string]map[string]int{
			"zap":       {"error": 1},
			"grep":      {"empty": 1, "hit": 3, "timeout": 2},
			"read_file": {"hit": 2, "refused": 1},
		}, "read_file 2 hit, 1 refused · grep 3 hit, 1 empty, 2 timeout · zap 1 error"},
	}
	for _, c := range cases {
		if got := formatToolCounts(c.in); got != c.want {
			t.Errorf("formatToolCounts(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
