package agent

import (
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/diff"
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
		{"[", "not a valid pattern"},
		{strings.Repeat("a", maxGlobLen+1), "longer than"},
	}
	for _, tt := range tests {
		if _, err := compileGlob(tt.glob); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("compileGlob(%.20q) error = %v, want %q", tt.glob, err, tt.err)
		}
	}
}

// The expert's path_glob, the sandbox deny list and ignore patterns use one
// engine: for patterns users write they must agree.
func TestGlobEnginesAgree(t *testing.T) {
	t.Parallel()
	cases := []struct{ pattern, path string }{
		{"node_modules", "web/node_modules/x.js"}, {"*.{pem,key}", "certs/tls.key"}, {"secrets/**", "secrets/a/b.txt"},
		{"**/testdata/**", "testdata/x"}, {"a/**/b", "a/b"}, {"vendor/", "vendor/x.go"}, {"*.md", "docs/x.go"},
		{"config/*.json", "config/sub/x.json"}, {".env*", "deploy/.env.prod"},
	}
	for _, c := range cases {
		want, err := diff.MatchGlob(c.pattern, c.path)
		if err != nil {
			t.Fatal(err)
		}
		g, err := compileGlob(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if g.match(c.path) != want || Denied([]string{c.pattern}, c.path) != want {
			t.Errorf("%q on %q: ignore %v, path_glob %v, deny %v", c.pattern, c.path, want, g.match(c.path), Denied([]string{c.pattern}, c.path))
		}
	}
}
