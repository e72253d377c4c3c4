package diff

import "testing"

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
