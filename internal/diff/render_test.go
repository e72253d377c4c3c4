package diff

import (
	"strings"
	"testing"
)

func TestTextRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range samples {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			for _, f := range files {
				text := f.Text()
				again, err := Parse([]byte(text))
				if err != nil {
					t.Fatalf("re-parse of %s: %v\n%s", f.Path(), err, text)
				}
				if got, want := dump(again), dump([]*File{f}); got != want {
					t.Errorf("re-parse of %s differs\n got:\n%s\nwant:\n%s\ntext:\n%s", f.Path(), got, want, text)
				}
			}
		})
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{
			name: "rename with spaces, CRLF and a missing newline",
			in: "diff --git a/old name.txt b/new name.txt\nsimilarity index 80%\nrename from old name.txt\nrename to new name.txt\n" +
				"index 1111111..2222222 100644\n--- a/old name.txt\t\n+++ b/new name.txt\t\n@@ -1,2 +1,2 @@ sec\n a\r\n-b\r\n+c\r\n\\ No newline at end of file\n",
			want: "diff --git a/old name.txt b/new name.txt\nsimilarity index 80%\nrename from old name.txt\nrename to new name.txt\n" +
				"index 1111111..2222222 100644\n--- a/old name.txt\t\n+++ b/new name.txt\t\n@@ -1,2 +1,2 @@ sec\n a\r\n-b\r\n+c\r\n\\ No newline at end of file\n",
		},
		{
			name: "plain added file gains a git header",
			in:   "--- /dev/null\n+++ b/dir/ä.txt\n@@ -0,0 +1 @@\n+x\n",
			want: "diff --git \"a/dir/\\303\\244.txt\" \"b/dir/\\303\\244.txt\"\n--- /dev/null\n+++ \"b/dir/\\303\\244.txt\"\n@@ -0,0 +1,1 @@\n+x\n",
		},
		{
			name: "binary deletion keeps only the marker",
			in:   "diff --git a/p.png b/p.png\ndeleted file mode 100644\nindex 1111111..0000000\nGIT binary patch\nliteral 0\nHcmV?d00001\n\n",
			want: "diff --git a/p.png b/p.png\ndeleted file mode 100644\nindex 1111111..0000000\nBinary files a/p.png and /dev/null differ\n",
		},
		{
			name: "mode change only",
			in:   "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n",
			want: "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := parseOne(t, tc.in).Text(); got != tc.want {
				t.Errorf("Text mismatch\n got: %q\nwant: %q", got, tc.want)
			}
		})
	}
}

func TestNumbered(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{
			name: "context, deletions and additions",
			in: "--- a/f.go\n+++ b/f.go\n@@ -10,4 +10,5 @@ func run() {\n a := 1\n-b := 2\n+b := 3\n+c := 4\n d()\n }\n" +
				"@@ -40,2 +41,0 @@\n-x\n-y\n",
			want: "@@ new lines 10-14 @@ func run() {\n" +
				"  10   a := 1\n" +
				"     - b := 2\n" +
				"  11 + b := 3\n" +
				"  12 + c := 4\n" +
				"  13   d()\n" +
				"  14   }\n" +
				"@@ lines deleted after new line 41 @@\n" +
				"     - x\n" +
				"     - y\n",
		},
		{
			name: "wide line numbers widen the column",
			in:   "--- a/f\n+++ b/f\n@@ -99998,2 +99998,2 @@\n a\n-b\n+c\n",
			want: "@@ new lines 99998-99999 @@\n" +
				"99998   a\n" +
				"      - b\n" +
				"99999 + c\n",
		},
		{
			name: "binary file renders nothing",
			in:   "Binary files a/x and b/x differ\n",
			want: "",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := parseOne(t, tc.in).Numbered(); got != tc.want {
				t.Errorf("Numbered mismatch\n got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestNumberedText(t *testing.T) {
	t.Parallel()
	got, err := NumberedText("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n a\n+b\n")
	if err != nil || !strings.Contains(got, "2") || !strings.Contains(got, "b") {
		t.Fatalf("NumberedText = %q, %v", got, err)
	}
	if _, err := NumberedText(""); err == nil {
		t.Fatal("an empty diff rendered")
	}
}
