package agent

import (
	"strings"
	"testing"
)

func TestGlobMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		glob, path string
		want       bool
	}{
		{"", "a/b/c.go", true},
		{"**", "c.go", true},
		{"*.go", "c.go", true},
		{"*.go", "a/b/c.go", true},
		{"*.go", "a/b/c.js", false},
		{"**/*.go", "c.go", true},
		{"**/*.go", "a/b/c.go", true},
		{"src/**/*.ts", "src/x.ts", true},
		{"src/**/*.ts", "src/a/b/x.ts", true},
		{"src/**/*.ts", "lib/src/x.ts", false},
		{"src/*.ts", "src/x.ts", true},
		{"src/*.ts", "src/a/x.ts", false},
		{"internal", "internal/auth/s.go", true},
		{"internal/", "internal/auth/s.go", true},
		{"internal", "pkg/internal/s.go", true}, // no slash: a name at any depth
		{"internal/auth", "internal/authz/s.go", false},
		{"./internal/auth/**", "internal/auth/s.go", true},
		{"a/**/b/**/c", "a/x/b/y/z/c", true},
		{"a/**/b/**/c", "a/x/c", false},
		{"[ab].go", "b.go", true},
	}
	for _, tt := range tests {
		g, err := compileGlob(tt.glob)
		if err != nil {
			t.Errorf("compileGlob(%q): %v", tt.glob, err)
			continue
		}
		if got := g.match(tt.path); got != tt.want {
			t.Errorf("glob %q match %q = %v, want %v", tt.glob, tt.path, got, tt.want)
		}
	}
}

func TestGlobMayContain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		glob, dir string
		want      bool
	}{
		{"src/**/*.ts", "src", true},
		{"src/**/*.ts", "src/a/b", true},
		{"src/**/*.ts", "lib", false},
		{"src/api/*.go", "src/web", false},
		{"src/api/*.go", "src/api", true},
		{"internal", "internal/auth", true},
		{"*.go", "anything", true},
		{"a/b", ".", true},
	}
	for _, tt := range tests {
		g, err := compileGlob(tt.glob)
		if err != nil {
			t.Fatalf("compileGlob(%q): %v", tt.glob, err)
		}
		if got := g.mayContain(tt.dir); got != tt.want {
			t.Errorf("glob %q mayContain %q = %v, want %v", tt.glob, tt.dir, got, tt.want)
		}
	}
}

func TestCompileGlobRejects(t *testing.T) {
	t.Parallel()
	tests := []struct{ glob, err string }{
		{"/etc/*", "must be relative"},
		{"../**", "must not contain .."},
		{"a/../../b", "must not contain .."},
		{"a**b", "** must be a whole segment"},
		{"[", "not a valid pattern"},
		{strings.Repeat("a", maxGlobLen+1), "longer than"},
	}
	for _, tt := range tests {
		if _, err := compileGlob(tt.glob); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("compileGlob(%.20q) error = %v, want %q", tt.glob, err, tt.err)
		}
	}
}
