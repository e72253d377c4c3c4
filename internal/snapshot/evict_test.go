package snapshot_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/snapshot"
)

// history makes a repository with n commits, each replacing big.txt with
// 100 KiB of its own, and returns the repository and the commits.
func history(t *testing.T, n int) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	var shas []string
	for i := range n {
		line := fmt.Sprintf("commit %d: %s\n", i, strings.Repeat("x", 50))
		shas = append(shas, commit(t, dir, map[string]string{"big.txt": strings.Repeat(line, 100<<10/len(line))}))
	}
	return dir, shas
}

func gitReview(repo, sha string) review.Review {
	return review.Review{ID: "r-" + sha[:8], Source: "git", Snapshot: repo, HeadSHA: sha}
}

func TestEvictLeastRecentlyUsedNotHeld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, c := history(t, 4)
	dir := t.TempDir()
	const max = 250 << 10 // two trees of about 104 KiB, not three
	// Two caches on one directory stand for two worker processes: a
	// lease is a lock on a file, which the other instance sees.
	holder := &snapshot.Cache{Dir: dir, MaxBytes: max}
	other := &snapshot.Cache{Dir: dir, MaxBytes: max}
	tree := func(sha string) string { return snapshot.TreeDir(&snapshot.Cache{Dir: dir}, sha) }
	present := func(sha string) bool {
		_, err := os.Stat(filepath.Join(tree(sha), "big.txt"))
		return err == nil
	}

	root1, release1, err := holder.Acquire(ctx, gitReview(repo, c[0]))
	if err != nil {
		t.Fatal(err)
	}
	for _, sha := range c[1:] {
		_, release, err := other.Acquire(ctx, gitReview(repo, sha))
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	// c0 is the least recently used but held; c1 and c2 went, in order.
	if !present(c[0]) || present(c[1]) || present(c[2]) || !present(c[3]) {
		t.Fatalf("after c0 held and c1..c3 used: present = %v %v %v %v, want true false false true",
			present(c[0]), present(c[1]), present(c[2]), present(c[3]))
	}
	if _, err := os.ReadFile(filepath.Join(root1, "big.txt")); err != nil {
		t.Fatalf("the held tree is unreadable: %v", err)
	}
	if u := other.Usage(); u > max {
		t.Errorf("usage %d over max_bytes %d", u, max)
	}

	// Released, c0 is the first to go.
	release1()
	_, release, err := other.Acquire(ctx, gitReview(repo, c[1]))
	if err != nil {
		t.Fatal(err)
	}
	release()
	if present(c[0]) || !present(c[1]) || !present(c[3]) {
		t.Errorf("after release: present c0=%v c1=%v c3=%v, want false true true", present(c[0]), present(c[1]), present(c[3]))
	}
}

func TestEvictNothingUnderLimitOrUnbounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, c := history(t, 3)
	for _, max := range []int64{0, 10 << 20} {
		cache := &snapshot.Cache{Dir: t.TempDir(), MaxBytes: max}
		for _, sha := range c {
			_, release, err := cache.Acquire(ctx, gitReview(repo, sha))
			if err != nil {
				t.Fatal(err)
			}
			release()
		}
		if n := cache.Evict(ctx); n != 0 {
			t.Errorf("max %d: evicted %d entries", max, n)
		}
		for _, sha := range c {
			if _, err := os.Stat(snapshot.TreeDir(cache, sha)); err != nil {
				t.Errorf("max %d: tree %s gone: %v", max, sha[:8], err)
			}
		}
	}
}

// TestConcurrentAcquireBuildsOnce: processes and goroutines asking for the
// same tree at once all get it whole.
func TestConcurrentAcquireBuildsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, c := history(t, 1)
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		cache := &snapshot.Cache{Dir: dir, MaxBytes: 1 << 30}
		wg.Add(1)
		go func() {
			defer wg.Done()
			root, release, err := cache.Acquire(ctx, gitReview(repo, c[0]))
			if err != nil {
				errs <- err
				return
			}
			defer release()
			data, err := os.ReadFile(filepath.Join(root, "big.txt"))
			if err != nil || len(data) < 100<<10-100 {
				errs <- fmt.Errorf("goroutine %d read %d bytes: %v", i, len(data), err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "trees-redacted", "*.tmp-*"))
	if len(left) != 0 {
		t.Errorf("temporary directories left: %v", left)
	}
}

// Trees an older version cached before redaction are removed, not served
// or kept outside the bound, and so are temporary trees a crashed build
// left an hour ago; a build in progress (a fresh temporary tree) is left.
func TestEvictRemovesUnredactedAndAbandonedTrees(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	legacy := filepath.Join(dir, "trees", "abc123", "config.go")
	stale := filepath.Join(dir, "trees-redacted", "def456.redact-tmp")
	fresh := filepath.Join(dir, "trees-redacted", "fed654.redact-tmp")
	for _, p := range []string{legacy, filepath.Join(stale, "a.go"), filepath.Join(fresh, "a.go")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("const key = \"AKIAZ7QWERTY12345678\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	cache := &snapshot.Cache{Dir: dir, MaxBytes: 10 << 20}
	cache.Evict(context.Background())
	for p, want := range map[string]bool{filepath.Join(dir, "trees"): false, stale: false, fresh: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", p, err == nil, want)
		}
	}
}

// A head tree redacted by an older rule set is removed by the first build
// after it appeared (within a minute of it) whatever the size bound, unless
// a review holds it: a secret those rules missed must not stay on disk, and
// a running review must not lose its tree. In a bounded cache that build
// lists the cache although its process's count says there is room.
func TestStaleRulesTreesAreRemoved(t *testing.T) {
	t.Parallel()
	for _, max := range []int64{0, 10 << 20} {
		t.Run(fmt.Sprintf("max_bytes=%d", max), func(t *testing.T) {
			t.Parallel()
			staleRulesTreesAreRemoved(t, max)
		})
	}
}

func staleRulesTreesAreRemoved(t *testing.T, max int64) {
	ctx := context.Background()
	repo, c := history(t, 3)
	dir := t.TempDir()
	cache := &snapshot.Cache{Dir: dir, MaxBytes: max}
	stale := func(sha string) string {
		return filepath.Join(dir, "trees-redacted", sha+"-000000000000")
	}
	// Two trees as an older binary left them: built, then renamed to the
	// name its rules' version gave them.
	for _, sha := range c[:2] {
		_, release, err := cache.Acquire(ctx, gitReview(repo, sha))
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	for _, sha := range c[:2] {
		cur := snapshot.TreeDir(cache, sha)
		for _, suffix := range []string{"", ".lock"} {
			if err := os.Rename(cur+suffix, stale(sha)+suffix); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A review of the older binary still holds the first one.
	held, err := os.Open(stale(c[0]) + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := syscall.Flock(int(held.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	// This binary's first build after the older one left its trees, a
	// minute after its last sweep.
	snapshot.ListedNow(cache)
	snapshot.SweepNow(cache)
	_, release, err := cache.Acquire(ctx, gitReview(repo, c[2]))
	if err != nil {
		t.Fatal(err)
	}
	release()
	if _, err := os.Stat(stale(c[1])); !os.IsNotExist(err) {
		t.Errorf("the unheld stale tree is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(stale(c[0]), "big.txt")); err != nil {
		t.Errorf("the held stale tree was removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(snapshot.TreeDir(cache, c[2]), "big.txt")); err != nil {
		t.Errorf("the current tree is missing: %v", err)
	}
}

// Evictions look for leftovers at most once a minute: the scans of the
// cache's directories are not repeated after every build.
func TestEvictSweepsLeftoversOnceAMinute(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cache := &snapshot.Cache{Dir: dir, MaxBytes: 10 << 20}
	cache.Evict(context.Background())
	legacy := filepath.Join(dir, "trees", "abc123")
	if err := os.MkdirAll(legacy, 0o755); err != nil {
		t.Fatal(err)
	}
	cache.Evict(context.Background())
	if _, err := os.Stat(legacy); err != nil {
		t.Fatalf("a second eviction within the minute swept again: %v", err)
	}
	snapshot.SweepNow(cache)
	cache.Evict(context.Background())
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Fatalf("the sweep a minute later left %s: %v", legacy, err)
	}
}

// A build lists the cache only when what its process added since the
// last listing fills half the room that listing left, or when the listing
// is older than relistEvery: what another process added is seen then, and
// the least recently used entries go first.
func TestBuildsListTheCacheOnlyWhenTheirCountSaysSo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, c := history(t, 5)
	dir := t.TempDir()
	cache := &snapshot.Cache{Dir: dir, MaxBytes: 640 << 10} // six trees of about 104 KiB
	tree := func(i int) string { return snapshot.TreeDir(cache, c[i]) }
	acquire := func(i int) {
		t.Helper()
		_, release, err := cache.Acquire(ctx, gitReview(repo, c[i]))
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	present := func(path string) bool { _, err := os.Stat(path); return err == nil }
	// foreign makes an entry of 1 MiB that another process built, used
	// before anything here, under a name of this binary's rules so that
	// only eviction removes it.
	foreign := func(name string) string {
		t.Helper()
		p := snapshot.TreeDir(cache, strings.Repeat(name, 40))
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p+".lock", []byte("1048576"), 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(p+".lock", old, old); err != nil {
			t.Fatal(err)
		}
		return p
	}

	acquire(0) // the first build lists: one tree
	f1 := foreign("e")
	snapshot.ListedNow(cache)
	acquire(1) // one tree added, in room for five
	if !present(f1) {
		t.Fatal("a build that left room by the process's count listed the cache")
	}
	snapshot.ListNow(cache)
	acquire(2) // two added, in room for five, but the listing is old
	if present(f1) {
		t.Error("the listing after relistEvery left the other process's entry, the least recently used")
	}

	f2 := foreign("f")
	snapshot.ListedNow(cache)
	acquire(3) // one added, in room for three
	if !present(f2) {
		t.Fatal("a build that left room by the process's count listed the cache")
	}
	acquire(4) // two added: more than half the room
	if present(f2) {
		t.Error("a build that filled half the room did not list the cache")
	}
	for i := range c {
		if !present(tree(i)) {
			t.Errorf("tree %d evicted; the five fit", i)
		}
	}
	if u := cache.Usage(); u > cache.MaxBytes {
		t.Errorf("usage %d over max_bytes %d", u, cache.MaxBytes)
	}
}

// BenchmarkEvictListing measures one listing of a cache of 2,000 entries
// (the default 2 GiB bound holds that many trees of 1 MiB): the cost a
// build would pay if every build listed the cache.
func BenchmarkEvictListing(b *testing.B) {
	dir := b.TempDir()
	cache := &snapshot.Cache{Dir: dir, MaxBytes: 1 << 40}
	for i := range 2000 {
		p := snapshot.TreeDir(cache, fmt.Sprintf("%040x", i))
		if err := os.MkdirAll(p, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p+".lock", []byte("1048576"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	for b.Loop() {
		if n := cache.Evict(ctx); n != 0 {
			b.Fatalf("evicted %d entries under the bound", n)
		}
	}
}
