package diff

import (
	"fmt"
	"strings"
)

// sample is a hand-written diff and the structure Parse must find in it,
// written in the notation of dump.
type sample struct {
	name string
	in   string
	want string
}

// samples are shared by the parse table test, the round-trip test and the
// fuzz seed corpus.
var samples = []sample{
	{
		name: "modified with two hunks and sections",
		in: `diff --git a/calc/sum.go b/calc/sum.go
index 1111111..2222222 100644
--- a/calc/sum.go
+++ b/calc/sum.go
@@ -3,4 +3,5 @@ import "fmt"
 // Sum adds.
 func Sum(a, b int) int {
-	return a - b
+	total := a + b
+	return total
 }
@@ -20,2 +21,2 @@ func Mean(xs []int) int {
-	return s / len(xs)
+	return s / max(len(xs), 1)
 }
`,
		want: `modified "calc/sum.go" "calc/sum.go" mode 100644..100644 index 1111111..2222222
@@ -3,4 +3,5 @@ "import \"fmt\""
  3 3 "// Sum adds."
  4 4 "func Sum(a, b int) int {"
- 5 0 "\treturn a - b"
+ 0 5 "\ttotal := a + b"
+ 0 6 "\treturn total"
  6 7 "}"
@@ -20,2 +21,2 @@ "func Mean(xs []int) int {"
- 20 0 "\treturn s / len(xs)"
+ 0 21 "\treturn s / max(len(xs), 1)"
  21 22 "}"
`,
	},
	{
		name: "several files: added, deleted, modified",
		in: `diff --git a/docs/new.md b/docs/new.md
new file mode 100644
index 0000000..3b18e51
--- /dev/null
+++ b/docs/new.md
@@ -0,0 +1,2 @@
+# Title
+text
diff --git a/old.txt b/old.txt
deleted file mode 100755
index 3b18e51..0000000
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-gone
diff --git a/main.go b/main.go
index aaaaaaa..bbbbbbb 100644
--- a/main.go
+++ b/main.go
@@ -1 +1 @@
-package old
+package main
`,
		want: `added "" "docs/new.md" mode ..100644 index 0000000..3b18e51
@@ -0,0 +1,2 @@ ""
+ 0 1 "# Title"
+ 0 2 "text"
deleted "old.txt" "" mode 100755.. index 3b18e51..0000000
@@ -1,1 +0,0 @@ ""
- 1 0 "gone"
modified "main.go" "main.go" mode 100644..100644 index aaaaaaa..bbbbbbb
@@ -1,1 +1,1 @@ ""
- 1 0 "package old"
+ 0 1 "package main"
`,
	},
	{
		name: "pure rename, rename with changes and spaces, copy, mode change",
		in: `diff --git a/a.txt b/b.txt
similarity index 100%
rename from a.txt
rename to b.txt
diff --git a/src/old name.go b/src/new name.go
similarity index 90%
rename from src/old name.go
rename to src/new name.go
index 1234567..89abcde 100644
--- a/src/old name.go	
+++ b/src/new name.go	
@@ -1,2 +1,2 @@
 package src
-var x = 1
+var x = 2
diff --git a/tmpl.txt b/tmpl copy.txt
similarity index 80%
copy from tmpl.txt
copy to tmpl copy.txt
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
`,
		want: `renamed "a.txt" "b.txt" sim 100
renamed "src/old name.go" "src/new name.go" mode 100644..100644 index 1234567..89abcde sim 90
@@ -1,2 +1,2 @@ ""
  1 1 "package src"
- 2 0 "var x = 1"
+ 0 2 "var x = 2"
copied "tmpl.txt" "tmpl copy.txt" sim 80
modified "run.sh" "run.sh" mode 100644..100755
`,
	},
	{
		name: "binary marker and GIT binary patch",
		in: `diff --git a/img/logo.png b/img/logo.png
index 1111111..2222222 100644
Binary files a/img/logo.png and b/img/logo.png differ
diff --git a/img/new.png b/img/new.png
new file mode 100644
index 0000000..3333333
Binary files /dev/null and b/img/new.png differ
diff --git a/blob.bin b/blob.bin
index 4444444..5555555 100644
GIT binary patch
literal 12
Tcmd;LWMXDuU|?ck;ACU~0RR91

literal 10
RcmZQzWMXDuU}R)u000310RR91

diff --git a/after.txt b/after.txt
index 6666666..7777777 100644
--- a/after.txt
+++ b/after.txt
@@ -1 +1,2 @@
 keep
+more
`,
		want: `modified "img/logo.png" "img/logo.png" binary mode 100644..100644 index 1111111..2222222
added "" "img/new.png" binary mode ..100644 index 0000000..3333333
modified "blob.bin" "blob.bin" binary mode 100644..100644 index 4444444..5555555
modified "after.txt" "after.txt" mode 100644..100644 index 6666666..7777777
@@ -1,1 +1,2 @@ ""
  1 1 "keep"
+ 0 2 "more"
`,
	},
	{
		name: "no newline at end of file on either side",
		in: `diff --git a/x.txt b/x.txt
--- a/x.txt
+++ b/x.txt
@@ -1,2 +1,2 @@
 first
-second
\ No newline at end of file
+second
diff --git a/y.txt b/y.txt
--- a/y.txt
+++ b/y.txt
@@ -1 +1 @@
-one
+one
\ No newline at end of file
`,
		want: `modified "x.txt" "x.txt"
@@ -1,2 +1,2 @@ ""
  1 1 "first"
- 2 0 "second" nonl
+ 0 2 "second"
modified "y.txt" "y.txt"
@@ -1,1 +1,1 @@ ""
- 1 0 "one"
+ 0 1 "one" nonl
`,
	},
	{
		name: "CRLF content lines",
		in: "diff --git a/win.txt b/win.txt\n--- a/win.txt\n+++ b/win.txt\n@@ -1,2 +1,2 @@\n l1\r\n-l2\r\n+L2\r\n" +
			"diff --git a/unix.txt b/unix.txt\n--- a/unix.txt\n+++ b/unix.txt\n@@ -1 +1 @@\n-a\n+b\n",
		want: `modified "win.txt" "win.txt" crlf
@@ -1,2 +1,2 @@ ""
  1 1 "l1"
- 2 0 "l2"
+ 0 2 "L2"
modified "unix.txt" "unix.txt"
@@ -1,1 +1,1 @@ ""
- 1 0 "a"
+ 0 1 "b"
`,
	},
	{
		name: "patch saved with CRLF everywhere",
		in:   "diff --git a/w.txt b/w.txt\r\n--- a/w.txt\r\n+++ b/w.txt\r\n@@ -1 +1 @@ sec\r\n-a\r\n+b\r\n",
		want: `modified "w.txt" "w.txt" crlf
@@ -1,1 +1,1 @@ "sec"
- 1 0 "a"
+ 0 1 "b"
`,
	},
	{
		name: "quoted paths with escapes",
		in: `diff --git "a/sp\303\244ce.txt" "b/sp\303\244ce.txt"
--- "a/sp\303\244ce.txt"
+++ "b/sp\303\244ce.txt"
@@ -1 +1 @@
-u
+v
diff --git "a/tab\there" "b/q\"uote\\d"
similarity index 95%
rename from "tab\there"
rename to "q\"uote\\d"
diff --git a/plain "b/new\001"
old mode 100644
new mode 100755
`,
		want: `modified "späce.txt" "späce.txt"
@@ -1,1 +1,1 @@ ""
- 1 0 "u"
+ 0 1 "v"
renamed "tab\there" "q\"uote\\d" sim 95
modified "plain" "new\x01" mode 100644..100755
`,
	},
	{
		name: "unquoted paths with spaces and no other path lines",
		in: `diff --git a/my dir/run me.sh b/my dir/run me.sh
old mode 100644
new mode 100755
diff --git a/old one.txt b/new one.txt
similarity index 100%
rename from old one.txt
rename to new one.txt
`,
		want: `modified "my dir/run me.sh" "my dir/run me.sh" mode 100644..100755
renamed "old one.txt" "new one.txt" sim 100
`,
	},
	{
		name: "omitted counts, zero-context hunks",
		in: `diff --git a/z.txt b/z.txt
--- a/z.txt
+++ b/z.txt
@@ -2 +1,0 @@ head
-removed
@@ -5,0 +5,2 @@
+ins1
+ins2
@@ -9 +10 @@ tail
-x
+y
`,
		want: `modified "z.txt" "z.txt"
@@ -2,1 +1,0 @@ "head"
- 2 0 "removed"
@@ -5,0 +5,2 @@ ""
+ 0 5 "ins1"
+ 0 6 "ins2"
@@ -9,1 +10,1 @@ "tail"
- 9 0 "x"
+ 0 10 "y"
`,
	},
	{
		name: "no-prefix diff",
		in: `diff --git a/b.go a/b.go
index 1111111..2222222 100644
--- a/b.go
+++ a/b.go
@@ -1 +1 @@
-x
+y
diff --git lib/util.go lib/util.go
--- lib/util.go
+++ lib/util.go
@@ -1 +1 @@
-x
+y
`,
		want: `modified "a/b.go" "a/b.go" mode 100644..100644 index 1111111..2222222
@@ -1,1 +1,1 @@ ""
- 1 0 "x"
+ 0 1 "y"
modified "lib/util.go" "lib/util.go"
@@ -1,1 +1,1 @@ ""
- 1 0 "x"
+ 0 1 "y"
`,
	},
	{
		name: "mnemonic prefixes",
		in: `diff --git i/cfg.yaml w/cfg.yaml
--- i/cfg.yaml
+++ w/cfg.yaml
@@ -1 +1 @@
-a: 1
+a: 2
`,
		want: `modified "cfg.yaml" "cfg.yaml"
@@ -1,1 +1,1 @@ ""
- 1 0 "a: 1"
+ 0 1 "a: 2"
`,
	},
	{
		name: "plain diff -u with timestamps and an Index preamble",
		in: `Index: notes.txt
===================================================================
--- notes.txt	2024-05-01 10:00:00.000000000 +0200
+++ notes.txt	2024-05-02 11:00:00.000000000 +0200
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
diff -ruN a/dir/new.c b/dir/new.c
--- a/dir/new.c	1970-01-01 01:00:00.000000000 +0100
+++ b/dir/new.c	2024-05-02 11:00:00.000000000 +0200
@@ -0,0 +1 @@
+int main(void) { return 0; }
--- /dev/null
+++ b/fresh.txt
@@ -0,0 +1 @@
+fresh
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
Binary files a/pic.gif and b/pic.gif differ
Only in b: extra
`,
		want: `modified "notes.txt" "notes.txt"
@@ -1,3 +1,3 @@ ""
  1 1 "one"
- 2 0 "two"
+ 0 2 "TWO"
  3 3 "three"
modified "dir/new.c" "dir/new.c"
@@ -0,0 +1,1 @@ ""
+ 0 1 "int main(void) { return 0; }"
added "" "fresh.txt"
@@ -0,0 +1,1 @@ ""
+ 0 1 "fresh"
deleted "gone.txt" ""
@@ -1,1 +0,0 @@ ""
- 1 0 "bye"
modified "pic.gif" "pic.gif" binary
`,
	},
	{
		name: "format-patch mail with preamble and signature",
		in: `From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001
From: Dev <dev@example.com>
Date: Mon, 6 May 2024 10:00:00 +0000
Subject: [PATCH] Fix the limit

Lists in the message:
- first point
+ second point
--- a quoted dash line
 indented text
---
 limit.go | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/limit.go b/limit.go
index 1111111..2222222 100644
--- a/limit.go
+++ b/limit.go
@@ -1,3 +1,3 @@ package limit
 
-const Max = 10
+const Max = 100
 
-- 
2.39.5

From fedcba9876543210fedcba9876543210fedcba98 Mon Sep 17 00:00:00 2001
Subject: [PATCH 2/2] More

- a list item in the second mail
---
diff --git a/limit.go b/limit.go
--- a/limit.go
+++ b/limit.go
@@ -2 +2 @@
-const Max = 100
+const Max = 1000
-- 
2.39.5
`,
		want: `modified "limit.go" "limit.go" mode 100644..100644 index 1111111..2222222
@@ -1,3 +1,3 @@ "package limit"
  1 1 ""
- 2 0 "const Max = 10"
+ 0 2 "const Max = 100"
  3 3 ""
modified "limit.go" "limit.go"
@@ -2,1 +2,1 @@ ""
- 2 0 "const Max = 100"
+ 0 2 "const Max = 1000"
`,
	},
	{
		name: "mail series without signatures",
		in: `From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001
Subject: [PATCH 1/2] Mode

---
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755

From 2222222222222222222222222222222222222222 Mon Sep 17 00:00:00 2001
Subject: [PATCH 2/2] Text

- a list item
---
diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1 +1 @@
-x
+y

`,
		want: `modified "run.sh" "run.sh" mode 100644..100755
modified "a.txt" "a.txt"
@@ -1,1 +1,1 @@ ""
- 1 0 "x"
+ 0 1 "y"
`,
	},
	{
		name: "empty input",
		in:   "",
		want: "",
	},
	{
		name: "text without any diff",
		in:   "just some notes\n- not a diff\n+ still not\n",
		want: "",
	},
	{
		name: "input without final newline",
		in:   "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b",
		want: `modified "f" "f"
@@ -1,1 +1,1 @@ ""
- 1 0 "a"
+ 0 1 "b"
`,
	},
}

// dump writes files in a compact notation that shows every parsed field:
// one line per file, then each hunk header and one line per hunk line with
// kind, old number, new number and quoted text.
func dump(files []*File) string {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "%s %q %q", f.Status, f.OldPath, f.NewPath)
		if f.Binary {
			b.WriteString(" binary")
		}
		if f.CRLF {
			b.WriteString(" crlf")
		}
		if f.OldMode != "" || f.NewMode != "" {
			fmt.Fprintf(&b, " mode %s..%s", f.OldMode, f.NewMode)
		}
		if f.OldHash != "" || f.NewHash != "" {
			fmt.Fprintf(&b, " index %s..%s", f.OldHash, f.NewHash)
		}
		if f.Similarity > 0 {
			fmt.Fprintf(&b, " sim %d", f.Similarity)
		}
		b.WriteByte('\n')
		for _, h := range f.Hunks {
			fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@ %q\n", h.OldStart, h.OldCount, h.NewStart, h.NewCount, h.Section)
			for _, l := range h.Lines {
				fmt.Fprintf(&b, "%c %d %d %q", l.Kind, l.OldNo, l.NewNo, l.Text)
				if l.NoNewline {
					b.WriteString(" nonl")
				}
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}
