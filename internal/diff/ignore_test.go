package diff

import (
	"strconv"
	"strings"
	"testing"
)

// modifiedFile returns a parsed one-hunk modification of path whose new side
// holds lines.
func modifiedFile(t *testing.T, path string, lines ...string) *File {
	t.Helper()
	var b strings.Builder
	b.WriteString("diff --git a/" + path + " b/" + path + "\n--- a/" + path + "\n+++ b/" + path + "\n")
	b.WriteString("@@ -0,0 +1," + strconv.Itoa(len(lines)) + " @@\n")
	for _, l := range lines {
		b.WriteString("+" + l + "\n")
	}
	return parseOne(t, b.String())
}

func TestClassify(t *testing.T) {
	t.Parallel()
	// 1000 lines of 102 diff bytes each pass the 100 000 default; 200 do not.
	big := make([]string, 1000)
	for i := range big {
		big[i] = strings.Repeat("x", 100)
	}
	small := big[:200]
	tests := []struct {
		name       string
		file       func(t *testing.T) *File
		opts       ClassifyOptions
		wantSkip   bool
		wantReason string
	}{
		{"ordinary source file", func(t *testing.T) *File { return modifiedFile(t, "pkg/a.go", "package pkg") }, ClassifyOptions{}, false, ""},
		{"binary", func(t *testing.T) *File { return parseOne(t, "Binary files a/x.png and b/x.png differ\n") }, ClassifyOptions{}, true, ReasonBinary},
		{"deleted", func(t *testing.T) *File {
			return parseOne(t, "--- a/gone.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-package gone\n")
		}, ClassifyOptions{}, true, ReasonDeleted},
		{"symlink", func(t *testing.T) *File {
			return parseOne(t, "diff --git a/link b/link\nnew file mode 120000\nindex 0000000..1de5659\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+target.go\n\\ No newline at end of file\n")
		}, ClassifyOptions{}, true, ReasonSymlink},
		{"submodule", func(t *testing.T) *File {
			return parseOne(t, "diff --git a/lib b/lib\nindex 1111111..2222222 160000\n--- a/lib\n+++ b/lib\n@@ -1 +1 @@\n-Subproject commit 1111111111111111111111111111111111111111\n+Subproject commit 2222222222222222222222222222222222222222\n")
		}, ClassifyOptions{}, true, ReasonSubmodule},
		{"NUL byte in a line", func(t *testing.T) *File { return modifiedFile(t, "a.txt", "x\x00y") }, ClassifyOptions{}, true, ReasonBinary},
		{"submodule added", func(t *testing.T) *File {
			return parseOne(t, "diff --git a/sub b/sub\nnew file mode 160000\nindex 0000000..1234567\n--- /dev/null\n+++ b/sub\n@@ -0,0 +1 @@\n+Subproject commit 1234567\n")
		}, ClassifyOptions{}, true, ReasonSubmodule},
		{"submodule moved", func(t *testing.T) *File {
			return parseOne(t, "diff --git a/sub b/sub\nindex 1234567..89abcde 160000\n--- a/sub\n+++ b/sub\n@@ -1 +1 @@\n-Subproject commit 1234567\n+Subproject commit 89abcde\n")
		}, ClassifyOptions{}, true, ReasonSubmodule},
		{"symlink added", func(t *testing.T) *File {
			return parseOne(t, "diff --git a/l b/l\nnew file mode 120000\nindex 0000000..1234567\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+../etc/passwd\n\\ No newline at end of file\n")
		}, ClassifyOptions{}, true, ReasonSymlink},
		{"deleted symlink", func(t *testing.T) *File {
			return parseOne(t, "diff --git a/l b/l\ndeleted file mode 120000\nindex 1234567..0000000\n--- a/l\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n")
		}, ClassifyOptions{}, true, ReasonDeleted},
		{"vendor directory", func(t *testing.T) *File { return modifiedFile(t, "vendor/github.com/x/y.go", "package y") }, ClassifyOptions{}, true, ReasonVendored},
		{"nested node_modules", func(t *testing.T) *File { return modifiedFile(t, "web/node_modules/left/index.js", "x") }, ClassifyOptions{}, true, ReasonVendored},
		{"third_party", func(t *testing.T) *File { return modifiedFile(t, "third_party/lib/a.c", "int a;") }, ClassifyOptions{}, true, ReasonVendored},
		{"file merely named vendor", func(t *testing.T) *File { return modifiedFile(t, "cmd/vendor", "x") }, ClassifyOptions{}, false, ""},
		{"go.sum", func(t *testing.T) *File { return modifiedFile(t, "go.sum", "h1") }, ClassifyOptions{}, true, ReasonLockFile},
		{"package-lock.json", func(t *testing.T) *File { return modifiedFile(t, "web/package-lock.json", "{}") }, ClassifyOptions{}, true, ReasonLockFile},
		{"yarn.lock", func(t *testing.T) *File { return modifiedFile(t, "yarn.lock", "x") }, ClassifyOptions{}, true, ReasonLockFile},
		{"pnpm-lock.yaml", func(t *testing.T) *File { return modifiedFile(t, "pnpm-lock.yaml", "x") }, ClassifyOptions{}, true, ReasonLockFile},
		{"Cargo.lock", func(t *testing.T) *File { return modifiedFile(t, "rust/Cargo.lock", "x") }, ClassifyOptions{}, true, ReasonLockFile},
		{"Gemfile.lock", func(t *testing.T) *File { return modifiedFile(t, "Gemfile.lock", "x") }, ClassifyOptions{}, true, ReasonLockFile},
		{"poetry.lock", func(t *testing.T) *File { return modifiedFile(t, "poetry.lock", "x") }, ClassifyOptions{}, true, ReasonLockFile},
		{"composer.lock", func(t *testing.T) *File { return modifiedFile(t, "composer.lock", "x") }, ClassifyOptions{}, true, ReasonLockFile},
		{"Pipfile.lock", func(t *testing.T) *File { return modifiedFile(t, "Pipfile.lock", "x") }, ClassifyOptions{}, true, ReasonLockFile},
		{"bare .lock is not a lock file", func(t *testing.T) *File { return modifiedFile(t, "dir/.lock", "x") }, ClassifyOptions{}, false, ""},
		{"protobuf Go", func(t *testing.T) *File { return modifiedFile(t, "api/v1/user.pb.go", "package v1") }, ClassifyOptions{}, true, ReasonGenerated},
		{"_gen.go", func(t *testing.T) *File { return modifiedFile(t, "enum_gen.go", "package x") }, ClassifyOptions{}, true, ReasonGenerated},
		{"minified js", func(t *testing.T) *File { return modifiedFile(t, "static/app.min.js", "x") }, ClassifyOptions{}, true, ReasonGenerated},
		{"minified css", func(t *testing.T) *File { return modifiedFile(t, "static/app.min.css", "x") }, ClassifyOptions{}, true, ReasonGenerated},
		{"zz_generated", func(t *testing.T) *File {
			return modifiedFile(t, "apis/zz_generated.deepcopy.go", "package apis")
		}, ClassifyOptions{}, true, ReasonGenerated},
		{"Go generated marker", func(t *testing.T) *File {
			return modifiedFile(t, "db/query.go", "// Code generated by sqlc. DO NOT EDIT.", "", "package db")
		}, ClassifyOptions{}, true, ReasonGenerated},
		{"@generated marker after a licence", func(t *testing.T) *File {
			return modifiedFile(t, "src/schema.js", "/*", " * Licence text.", " *", " * @generated", " */")
		}, ClassifyOptions{}, true, ReasonGenerated},
		{"marker text outside a comment", func(t *testing.T) *File {
			return modifiedFile(t, "gen.go", `const marker = "Code generated by x. DO NOT EDIT."`)
		}, ClassifyOptions{}, false, ""},
		{"marker too far down the file", func(t *testing.T) *File {
			return parseOne(t, "--- a/x.go\n+++ b/x.go\n@@ -50 +50 @@\n-a\n+// Code generated by x. DO NOT EDIT.\n")
		}, ClassifyOptions{}, false, ""},
		{"pure rename", func(t *testing.T) *File {
			return parseOne(t, "diff --git a/a.go b/b.go\nsimilarity index 100%\nrename from a.go\nrename to b.go\n")
		}, ClassifyOptions{}, true, ReasonNoChanges},
		{"mode change only", func(t *testing.T) *File {
			return parseOne(t, "diff --git a/x.sh b/x.sh\nold mode 100644\nnew mode 100755\n")
		}, ClassifyOptions{}, true, ReasonNoChanges},
		{"too large by default", func(t *testing.T) *File { return modifiedFile(t, "big.go", big...) }, ClassifyOptions{}, true, ReasonTooLarge},
		{"too large with a small limit", func(t *testing.T) *File { return modifiedFile(t, "big.go", small...) }, ClassifyOptions{MaxFileDiffChars: 1000}, true, ReasonTooLarge},
		{"under the limit", func(t *testing.T) *File { return modifiedFile(t, "big.go", small...) }, ClassifyOptions{}, false, ""},
		{"limit disabled", func(t *testing.T) *File { return modifiedFile(t, "big.go", big...) }, ClassifyOptions{MaxFileDiffChars: -1}, false, ""},
		{"user glob on base name", func(t *testing.T) *File { return modifiedFile(t, "docs/guide/intro.md", "# x") }, ClassifyOptions{IgnoreGlobs: []string{"*.md"}}, true, ReasonIgnored},
		{"user glob with **", func(t *testing.T) *File { return modifiedFile(t, "test/fixtures/deep/a.json", "{}") }, ClassifyOptions{IgnoreGlobs: []string{"test/**/*.json"}}, true, ReasonIgnored},
		{"user glob that does not match", func(t *testing.T) *File { return modifiedFile(t, "src/a.json", "{}") }, ClassifyOptions{IgnoreGlobs: []string{"test/**/*.json"}}, false, ""},
		{"malformed user glob never matches", func(t *testing.T) *File { return modifiedFile(t, "src/a.go", "x") }, ClassifyOptions{IgnoreGlobs: []string{"[", "src/["}}, false, ""},
		{"binary wins over vendored", func(t *testing.T) *File {
			return parseOne(t, "Binary files a/vendor/x.png and b/vendor/x.png differ\n")
		}, ClassifyOptions{}, true, ReasonBinary},
		{"nil file", func(t *testing.T) *File { return nil }, ClassifyOptions{}, true, ReasonNoChanges},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			skip, reason := Classify(tc.file(t), tc.opts)
			if skip != tc.wantSkip || reason != tc.wantReason {
				t.Errorf("Classify = %v, %q, want %v, %q", skip, reason, tc.wantSkip, tc.wantReason)
			}
		})
	}
}

// TestClassifyPathNameRulesOnly pins that a snapshot file is judged by its
// name alone: an ordinary source file with no diff is kept (search tools must
// see it), while vendored, lock, generated and ignored names are skipped.
func TestClassifyPathNameRulesOnly(t *testing.T) {
	cases := []struct {
		path   string
		globs  []string
		skip   bool
		reason string
	}{
		{"app/db.py", nil, false, ""},
		{"src/main.go", nil, false, ""},
		{"vendor/x/y.go", nil, true, ReasonVendored},
		{"go.sum", nil, true, ReasonLockFile},
		{"api/types.pb.go", nil, true, ReasonGenerated},
		{"docs/readme.txt", []string{"docs/"}, true, ReasonIgnored},
	}
	for _, c := range cases {
		skip, reason := ClassifyPath(c.path, c.globs)
		if skip != c.skip || reason != c.reason {
			t.Errorf("ClassifyPath(%q) = %v, %q; want %v, %q", c.path, skip, reason, c.skip, c.reason)
		}
	}
}
