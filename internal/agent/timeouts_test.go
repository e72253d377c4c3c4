package agent

import (
	"testing"
	"time"
)

func TestBackoffBudget(t *testing.T) {
	t.Parallel()
	const s = time.Second
	tests := []struct {
		name     string
		tool     string
		timeouts int
		want     time.Duration
	}{
		{"read starts at the read budget", toolReadFile, 0, 5 * s},
		{"list_dir is a read", toolListDir, 0, 5 * s},
		{"grep starts at the scan budget", toolGrep, 0, 15 * s},
		{"find_symbol starts at the scan budget", toolFindSymbol, 0, 15 * s},
		{"one timeout doubles", toolGrep, 1, 30 * s},
		{"two timeouts double twice", toolReadFile, 2, 20 * s},
		{"capped", toolGrep, 2, 60 * s},
		{"stays capped", toolGrep, 50, 60 * s},
	}
	for _, tt := range tests {
		b := newBackoff(5*s, 15*s, 60*s)
		for range tt.timeouts {
			b.timedOut("k")
		}
		if got := b.budget(tt.tool, "k"); got != tt.want {
			t.Errorf("%s: budget = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestBackoffIsPerSignature(t *testing.T) {
	t.Parallel()
	b := newBackoff(time.Second, 2*time.Second, time.Minute)
	slow := scopeKey(toolGrep, "src/**")
	b.timedOut(slow)
	if got := b.budget(toolGrep, slow); got != 4*time.Second {
		t.Errorf("timed-out scope budget = %v, want 4s", got)
	}
	if got := b.budget(toolGrep, scopeKey(toolGrep, "lib/**")); got != 2*time.Second {
		t.Errorf("other scope budget = %v, want 2s", got)
	}
	if got := b.budget(toolReadFile, scopeKey(toolReadFile, "src/**")); got != time.Second {
		t.Errorf("other tool budget = %v, want 1s", got)
	}
}

func TestScopeKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool, scope, want string
	}{
		{toolGrep, "", "grep:**"},
		{toolGrep, "**", "grep:**"},
		{toolGrep, "./**/*", "grep:**"},
		{toolGrep, " ./src/** ", "grep:src/**"},
		{toolFindSymbol, "", "find_symbol:."},
		{toolReadFile, "./a//b.go", "read_file:a/b.go"},
		{toolListDir, "", "list_dir:."},
	}
	for _, tt := range tests {
		if got := scopeKey(tt.tool, tt.scope); got != tt.want {
			t.Errorf("scopeKey(%s, %q) = %q, want %q", tt.tool, tt.scope, got, tt.want)
		}
	}
}
