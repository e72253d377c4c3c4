package diff

import (
	"strings"
	"testing"
)

func TestMatchGlob(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*.md", "README.md", true},
		{"*.md", "docs/deep/guide.md", true},
		{"*.md", "docs/guide.mdx", false},
		{"docs/*.md", "docs/guide.md", true},
		{"docs/*.md", "docs/deep/guide.md", false},
		{"docs/*.md", "other/docs/guide.md", false},
		{"/docs/*.md", "docs/guide.md", true},
		{"docs/**/*.md", "docs/guide.md", true},
		{"docs/**/*.md", "docs/a/b/c/guide.md", true},
		{"docs/**/*.md", "src/docs/a.md", false},
		{"**/testdata/**", "pkg/x/testdata/in.txt", true},
		{"**/testdata/**", "testdata/in.txt", true},
		{"**/testdata/**", "pkg/testdatax/in.txt", false},
		{"testdata/", "pkg/testdata/in.txt", true},
		{"/testdata/", "pkg/testdata/in.txt", false},
		{"/testdata/", "testdata/sub/in.txt", true},
		{"gen/**", "gen/a/b.go", true},
		{"gen/**", "src/gen/a.go", false},
		{"a/**/b/**/c", "a/x/b/y/z/c", true},
		{"a/**/b/**/c", "a/x/y/z/c", false},
		{"internal/?.go", "internal/a.go", true},
		{"internal/[a-c].go", "internal/d.go", false},
		{"**", "any/thing", true},
	}
	for _, tc := range tests {
		t.Run(tc.pattern+"~"+tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := MatchGlob(tc.pattern, tc.name)
			if err != nil {
				t.Fatalf("MatchGlob: %v", err)
			}
			if got != tc.want {
				t.Errorf("MatchGlob(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
			}
		})
	}
}

func TestCheckGlob(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern string
		wantErr bool
	}{
		{"*.go", false},
		{"a/**/b", false},
		{"docs/", false},
		{"", true},
		{"  ", true},
		{"/", true},
		{"[", true},
		{"src/[a-", true},
		{`bad\`, true},
	}
	for _, tc := range tests {
		t.Run(tc.pattern, func(t *testing.T) {
			t.Parallel()
			err := CheckGlob(tc.pattern)
			if (err != nil) != tc.wantErr {
				t.Errorf("CheckGlob(%q) = %v, want error %v", tc.pattern, err, tc.wantErr)
			}
		})
	}
}

// Patterns as users write them in .gitignore-style ignore lists, with what
// they expect. The expert's path_glob and the sandbox deny list use the same
// engine (internal/agent tests that they agree with this table).
var GitignoreCases = []struct {
	Pattern, Path string
	Want          bool
}{
	{"*.md", "README.md", true},
	{"*.md", "docs/guide/intro.md", true},
	{"*.md", "docs/guide/intro.mdx", false},
	{"node_modules", "node_modules/left-pad/index.js", true},
	{"node_modules", "web/node_modules/x.js", true},
	{"node_modules/", "node_modules/x.js", true},
	{"build/", "build/out/a.o", true},
	{"build/", "src/build.go", false},
	{"/vendor", "vendor/github.com/x/y.go", true},
	{"/vendor", "third_party/vendor/y.go", false},
	{"vendor/", "third_party/vendor/y.go", true},
	{"docs/**", "docs/a/b/c.md", true},
	{"docs/**", "src/docs/a.md", false},
	{"**/testdata/**", "a/b/testdata/x.json", true},
	{"**/testdata/**", "testdata/x.json", true},
	{"test/**/*.json", "test/x.json", true},
	{"test/**/*.json", "test/fixtures/deep/a.json", true},
	{"test/**/*.json", "src/test/a.json", false},
	{"src/*.ts", "src/a/x.ts", false},
	{"*.{png,jpg}", "assets/logo.png", true},
	{"*.{png,jpg}", "assets/logo.gif", false},
	{"*.min.js", "static/app.min.js", true},
	{"[Mm]akefile", "Makefile", true},
	{"generated/*.pb.go", "generated/api.pb.go", true},
	{"generated/*.pb.go", "x/generated/api.pb.go", false},
	{"./scripts/*.sh", "scripts/run.sh", true},
	{".env*", "config/.env.local", true},
	{"a/**/b", "a/b", true},
	{"a/**/b", "a/x/y/b", true},
}

func TestGlobGitignoreStylePatterns(t *testing.T) {
	t.Parallel()
	for _, c := range GitignoreCases {
		got, err := MatchGlob(c.Pattern, c.Path)
		if err != nil || got != c.Want {
			t.Errorf("MatchGlob(%q, %q) = %v, %v; want %v", c.Pattern, c.Path, got, err, c.Want)
		}
	}
	for _, bad := range []string{"", "/", "[", "src/[a"} {
		if CheckGlob(bad) == nil {
			t.Errorf("CheckGlob(%q) accepted a malformed pattern", bad)
		}
	}
}

// MayContain never rules out a directory of a path the glob matches, even
// when the pattern's escapes, classes or braces hold a "/" or a segment
// holds "**" next to other text (inputs the fuzzer found).
func TestGlobMayContainWhatItMatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ pattern, path string }{
		{"[0/]", "0/0"}, {`[\/0]`, "0/0"}, {`0\/0`, "0/0"}, {`0\\/0`, "0/0"}, {"0***/1", "0/1"}, {"{a/b,c}/x.go", "a/b/x.go"},
	} {
		g, err := CompileGlob(tc.pattern)
		if err != nil || !g.Match(tc.path) {
			continue
		}
		if !g.MayContain("0") && strings.HasPrefix(tc.path, "0/") || !g.MayContain("a") && strings.HasPrefix(tc.path, "a/") {
			t.Errorf("glob %q matches %q but rules out its first directory", tc.pattern, tc.path)
		}
	}
}
