package diff

import (
	"strings"
	"testing"
)

// A proposed fix is a unified diff that must apply to the head version;
// one that does not is never shown.
func TestParseFixAndApplies(t *testing.T) {
	t.Parallel()
	head := strings.Split("package a\n\nfunc first(xs []int) int {\n\treturn xs[0]\n}", "\n")
	good := "--- a/a.go\n+++ b/a.go\n@@ -3,3 +3,6 @@\n func first(xs []int) int {\n+\tif len(xs) == 0 {\n+\t\treturn 0\n+\t}\n \treturn xs[0]\n }\n"
	hunks, err := ParseFix(good)
	if err != nil || len(hunks) != 1 || hunks[0].OldStart != 3 || len(hunks[0].Old) != 3 || len(hunks[0].New) != 6 {
		t.Fatalf("ParseFix = %+v, %v", hunks, err)
	}
	if !Applies(hunks, head) {
		t.Error("a fix made against the head version does not apply")
	}
	moved, _ := ParseFix(strings.Replace(good, "@@ -3,3 +3,6 @@", "@@ -2,3 +2,6 @@", 1))
	if Applies(moved, head) {
		t.Error("a fix at the wrong lines applies")
	}
	for _, bad := range []string{"just use a length check", "@@ -3,2 +3,2 @@\n func first(xs []int) int {\n"} {
		if _, err := ParseFix(bad); err == nil {
			t.Errorf("ParseFix(%q) accepted", bad)
		}
	}
}
