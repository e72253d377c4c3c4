package intent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/untrusted"
)

// TestUserMessageFencesInjection puts each case of the injection corpus in
// the purpose, the diff and the content of a file: the purpose lands in
// the change's fence, the diff and content in the file's, which the text
// cannot close, and no line of the corpus lies outside them.
func TestUserMessageFencesInjection(t *testing.T) {
	corpus, _ := filepath.Glob("../../internal/untrusted/testdata/injection/*")
	if len(corpus) == 0 {
		t.Fatal("injection corpus not found")
	}
	for _, p := range corpus {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		t.Run(filepath.Base(p), func(t *testing.T) {
			var diffText strings.Builder
			diffText.WriteString("diff --git a/x.txt b/x.txt\nnew file mode 100644\n--- /dev/null\n+++ b/x.txt\n")
			lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
			diffText.WriteString("@@ -0,0 +1," + strconv.Itoa(len(lines)) + " @@\n")
			for _, l := range lines {
				diffText.WriteString("+" + l + "\n")
			}
			f := review.File{Path: "x.txt", Change: "added", Diff: diffText.String(), Content: &text, ChangedLines: []int{1}}
			fence := untrusted.New()
			msg, err := userMessage(review.Review{Repo: "r", Purpose: text}, []review.File{f}, false, fence)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(msg, fence.Close()); n != 2 {
				t.Fatalf("%d closing lines, want 2 (the change, the file):\n%s", n, msg)
			}
			if n := strings.Count(msg, "UNTRUSTED-"+fence.ID()); n != 4 {
				t.Errorf("fence id appears %d times, want 4", n)
			}
			if err := untrusted.Check(msg, []string{text}, fence.ID()); err != nil {
				t.Error(err)
			}
		})
	}
}
