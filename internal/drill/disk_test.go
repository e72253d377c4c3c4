package drill

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// mountTmpfs mounts a tmpfs of size at a new directory with the extra
// options (e.g. "ro") and unmounts it when the test ends. A mode of 0555
// would not stop root, so a real mount is the only honest read-only file
// system; where mounting is not permitted the drill is skipped.
func mountTmpfs(t *testing.T, size string, extra ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cache")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := strings.Join(append([]string{"size=" + size}, extra...), ",")
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mounting a tmpfs is not permitted here (%v: %s): the drill needs a file system of its own", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// diskDrill runs one review with the workers' snapshot cache at cache and
// checks that it ends within a minute, with the expert items failed for
// the reason want and the stored report naming it.
func diskDrill(t *testing.T, cache, want string) {
	f := newFleet(t, llmDelay(0, nil), func(c *config.Config) { c.Expert.SnapshotDir = cache })
	f.scheduler()
	f.startWorker()
	ctx := context.Background()
	start := time.Now()
	ids := f.submit(1)
	r := f.wait(ids, 3*time.Minute)[ids[0]]
	took := time.Since(start)
	if r.Status != review.ReviewDone && r.Status != review.ReviewFailed {
		t.Fatalf("review still %s after %s", r.Status, took)
	}
	items, err := f.sub.Store.ListItems(ctx, ids[0], review.StageExpert)
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, it := range items {
		full, err := f.sub.Store.GetItem(ctx, ids[0], review.StageExpert, it.Key)
		if err != nil {
			t.Fatal(err)
		}
		if full.Status != review.ItemFailed || !strings.Contains(full.Error, want) {
			t.Errorf("expert item %s: %s %q; want failed for %q", it.Key, full.Status, full.Error, want)
			continue
		}
		failed++
		t.Logf("expert item %s: failed after %d attempts (%d claims): %s", it.Key, full.Attempts, full.Claims, full.Error)
	}
	if len(items) == 0 {
		t.Fatal("the review had no expert item to fail")
	}
	// The failure report is stored just after the review is marked failed.
	rep, err := f.sub.Store.GetReport(ctx, ids[0])
	for wait := time.Now().Add(15 * time.Second); err != nil && time.Now().Before(wait); {
		time.Sleep(200 * time.Millisecond)
		rep, err = f.sub.Store.GetReport(ctx, ids[0])
	}
	if err != nil {
		t.Fatalf("stored report: %v", err)
	}
	if !strings.Contains(rep.Markdown, want) || !strings.Contains(string(rep.JSON), want) || !strings.Contains(string(rep.SARIF), want) {
		t.Errorf("the stored report does not name %q:\n%s", want, rep.Markdown)
	}
	t.Logf("review %s in %s with %d of %d expert items failed for %q", r.Status, took.Round(100*time.Millisecond), failed, len(items), want)
	if took > time.Minute {
		t.Errorf("the review took %s: a refusing disk must end it within a minute, not at the review timeout", took)
	}
}

// A worker whose snapshot cache is on a read-only file system fails its
// expert items after a few attempts with the cause named, and the review
// ends within a minute instead of retrying them every second until its
// timeout (30 minutes by default).
func TestReadOnlySnapshotCacheDrill(t *testing.T) {
	processDrill(t)
	diskDrill(t, mountTmpfs(t, "1m", "ro"), "snapshot cache not writable")
}

// The same with the cache's file system full.
func TestFullSnapshotCacheDrill(t *testing.T) {
	processDrill(t)
	cache := mountTmpfs(t, "256k")
	fill, err := os.Create(filepath.Join(cache, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	for {
		if _, err := fill.Write(buf); err != nil {
			break // ENOSPC: the file system is full
		}
	}
	_ = fill.Close()
	diskDrill(t, cache, "snapshot cache full")
}
