package gitsrc

import (
	"context"
	"strings"
	"testing"
)

func TestLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "Add retries\n\nRetries failed uploads three times.")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "Fix typo")
	got, err := Log(context.Background(), dir, "HEAD~2", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "Fix typo\n\nAdd retries") || !strings.Contains(got, "three times") || strings.Contains(got, "base") {
		t.Fatalf("log %q", got)
	}
	if _, err := Log(context.Background(), dir, "nope", "HEAD"); err == nil {
		t.Fatal("unknown revision accepted")
	}
}
