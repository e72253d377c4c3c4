package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Every cache entry (a clone, an exported tree, a per-review tree) is a
// directory P with a lock file P+".lock" beside it. A process using the
// entry holds a shared flock on the lock file; building, fetching into or
// evicting the entry takes it exclusively. The lock file's modification
// time is the entry's last use and its content the entry's size on disk,
// so that eviction reads neither the entries nor each other's state.

// lockSuffix names an entry's lock file.
const lockSuffix = ".lock"

// lockPoll is how often a lock held by another process is tried again.
const lockPoll = 20 * time.Millisecond

// lockEntry opens (creating it) and locks path's lock file with how
// (syscall.LOCK_SH or LOCK_EX), waiting for other holders until ctx ends.
// An evictor removes a lock file while holding it exclusively; a lock
// taken on a file removed meanwhile protects nothing, so it is taken again
// on the new file.
func lockEntry(ctx context.Context, path string, how int) (*os.File, error) {
	name := path + lockSuffix
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if err := flock(ctx, f, how); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if current(f, name) {
			return f, nil
		}
		_ = f.Close()
	}
}

// flock locks f, polling while another process holds a conflicting lock.
func flock(ctx context.Context, f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return err
		}
		t := time.NewTimer(lockPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// current reports whether the open file f is still the file at name.
func current(f *os.File, name string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(name)
	return err == nil && os.SameFile(a, b)
}

// unlock releases and closes a lock file.
func unlock(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	_ = f.Close()
}

// touch marks the entry as used now.
func touch(f *os.File) {
	now := time.Now()
	_ = os.Chtimes(f.Name(), now, now)
}

// recordSize writes the entry's size into its lock file (held exclusively).
func recordSize(f *os.File, size int64) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.FormatInt(size, 10)), 0)
	return err
}

// recordedSize reads the size written by recordSize; ok is false when
// there is none.
func recordedSize(lockFile string) (int64, bool) {
	data, err := os.ReadFile(lockFile)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	return n, err == nil && n >= 0
}

// diskUsage is the space the files and directories under dir take on
// disk, in bytes.
func diskUsage(dir string) int64 {
	var total int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			total += st.Blocks * 512
		} else {
			total += info.Size()
		}
		return nil
	})
	return total
}

// exists reports whether the entry's directory is there.
func exists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// lease returns a shared hold on the entry at path, building it with
// build first when it is missing. The entry is not evicted until release
// is called. Builders of one entry take turns (a mutex in this process, the
// exclusive lock across processes) and a second one finds it built.
func (c *Cache) lease(ctx context.Context, path string, build func() error) (release func(), err error) {
	for range 5 {
		f, err := lockEntry(ctx, path, syscall.LOCK_SH)
		if err != nil {
			return nil, err
		}
		if exists(path) {
			touch(f)
			return func() { unlock(f) }, nil
		}
		unlock(f)

		built, grown, err := c.buildEntry(ctx, path, build)
		if err != nil {
			return nil, err
		}
		// Changing an exclusive lock into a shared one is not atomic: an
		// evictor can come in between, and then the entry is built again.
		if err := flock(ctx, built, syscall.LOCK_SH); err != nil {
			unlock(built)
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if current(built, path+lockSuffix) && exists(path) {
			c.evict(ctx, grown)
			return func() { unlock(built) }, nil
		}
		unlock(built)
	}
	return nil, fmt.Errorf("snapshot %s: evicted again and again while being built (is snapshot.max_bytes far too small?)", path)
}

// buildEntry builds the entry at path under its exclusive lock unless
// another builder did, records its size and returns the lock file, still
// held exclusively, with the size it built (0 when it found the entry).
func (c *Cache) buildEntry(ctx context.Context, path string, build func() error) (*os.File, int64, error) {
	done := c.lock(path)
	defer done()
	f, err := lockEntry(ctx, path, syscall.LOCK_EX)
	if err != nil {
		return nil, 0, err
	}
	var size int64
	if !exists(path) {
		if err := build(); err != nil {
			unlock(f)
			return nil, 0, err
		}
		size = diskUsage(path)
		if err := recordSize(f, size); err != nil {
			unlock(f)
			return nil, 0, fmt.Errorf("record the size of %s: %w", path, err)
		}
	}
	touch(f)
	return f, size, nil
}

// exclusive runs fn with the entry at path held exclusively, in this
// process and across processes, and records the entry's size afterwards.
// It returns the entry's size less the size recorded before fn (0 when fn
// left no entry).
func (c *Cache) exclusive(ctx context.Context, path string, fn func() error) (int64, error) {
	done := c.lock(path)
	defer done()
	f, err := lockEntry(ctx, path, syscall.LOCK_EX)
	if err != nil {
		return 0, err
	}
	defer unlock(f)
	before, _ := recordedSize(f.Name())
	err = fn()
	var grown int64
	if exists(path) {
		after := diskUsage(path)
		_ = recordSize(f, after)
		touch(f)
		grown = after - before
	}
	return grown, err
}
