package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Limits of a captured tree, used when CaptureOptions leaves them zero.
const (
	DefaultCaptureFileBytes  = 2 << 20   // larger files are left out
	DefaultCaptureTotalBytes = 256 << 20 // the other files stop here
	DefaultCaptureFiles      = 20_000    // and here
)

// CaptureOptions bounds and filters a Capture.
type CaptureOptions struct {
	// MaxFileBytes: larger files are left out. Default DefaultCaptureFileBytes.
	MaxFileBytes int64
	// MaxTotalBytes and MaxFiles bound the copy; the changed files are
	// copied first and always, the rest until a bound is reached. Defaults
	// DefaultCaptureTotalBytes and DefaultCaptureFiles.
	MaxTotalBytes int64
	MaxFiles      int
	// Skip reports paths never copied (secrets the expert may not read).
	Skip func(rel string) bool
}

// CaptureStats says what a Capture copied and left out.
type CaptureStats struct {
	Files   int   // files copied
	Bytes   int64 // bytes copied
	Skipped int   // files left out: symlinks, denied, hard-linked, too large or over the bounds
}

// Capture copies files from the work tree at src into a new directory
// under parent and returns it: first every path of changed, then those of
// rest, as long as the bounds allow. Paths are slash-separated and relative
// to src. Symlinks (in any component), files that are not regular, files
// with several hard links and skipped paths are left out, so the copy holds
// nothing the expert's sandbox would refuse to read; the copy's files have a
// single link each. Later edits to src do not change the copy.
func Capture(ctx context.Context, src, parent string, changed, rest []string, opt CaptureOptions) (string, CaptureStats, error) {
	opt = opt.withDefaults()
	var st CaptureStats
	from, err := os.OpenRoot(src)
	if err != nil {
		return "", st, fmt.Errorf("capture %s: %w", src, err)
	}
	defer from.Close()
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", st, fmt.Errorf("capture %s: %w", src, err)
	}
	dest, err := os.MkdirTemp(parent, "diff-")
	if err != nil {
		return "", st, fmt.Errorf("capture %s: %w", src, err)
	}
	to, err := os.OpenRoot(dest)
	if err != nil {
		return "", st, fmt.Errorf("capture %s: %w", src, err)
	}
	defer to.Close()
	seen := map[string]bool{}
	copyAll := func(paths []string, bounded bool) error {
		for _, p := range paths {
			if err := ctx.Err(); err != nil {
				return err
			}
			rel := path.Clean(p)
			if seen[rel] || !filepath.IsLocal(filepath.FromSlash(rel)) || (opt.Skip != nil && opt.Skip(rel)) {
				if !seen[rel] {
					st.Skipped++
				}
				continue
			}
			seen[rel] = true
			if bounded && (st.Files >= opt.MaxFiles || st.Bytes >= opt.MaxTotalBytes) {
				st.Skipped++
				continue
			}
			n, err := copyFile(from, to, rel, opt.MaxFileBytes)
			if err != nil {
				return fmt.Errorf("capture %s from %s: %w", rel, src, err)
			}
			if n < 0 {
				st.Skipped++
				continue
			}
			st.Files++
			st.Bytes += n
		}
		return nil
	}
	if err := copyAll(changed, false); err != nil {
		_ = os.RemoveAll(dest)
		return "", st, err
	}
	if err := copyAll(rest, true); err != nil {
		_ = os.RemoveAll(dest)
		return "", st, err
	}
	return dest, st, nil
}

func (o CaptureOptions) withDefaults() CaptureOptions {
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultCaptureFileBytes
	}
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = DefaultCaptureTotalBytes
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultCaptureFiles
	}
	return o
}

// copyFile copies the regular file rel from one root to the other and
// returns its size, or -1 when the file is left out (absent, a symlink or
// under one, not regular, hard-linked, too large).
func copyFile(from, to *os.Root, rel string, maxBytes int64) (int64, error) {
	fi, ok := plainFile(from, rel)
	if !ok || linkCount(fi) > 1 || fi.Size() > maxBytes {
		return -1, nil
	}
	f, err := from.Open(filepath.FromSlash(rel))
	if err != nil {
		return -1, nil
	}
	defer f.Close()
	ofi, err := f.Stat()
	if err != nil || !os.SameFile(fi, ofi) {
		return -1, nil // changed while it was opened
	}
	name := filepath.FromSlash(rel)
	if dir := filepath.Dir(name); dir != "." {
		if err := to.MkdirAll(dir, 0o755); err != nil {
			return 0, err
		}
	}
	out, err := to.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, io.LimitReader(f, maxBytes))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// plainFile reports whether rel is a regular file reached without any
// symlink, and returns its information.
func plainFile(root *os.Root, rel string) (fs.FileInfo, bool) {
	segs := strings.Split(rel, "/")
	var fi fs.FileInfo
	for i := range segs {
		var err error
		fi, err = root.Lstat(filepath.FromSlash(strings.Join(segs[:i+1], "/")))
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			return nil, false
		}
	}
	return fi, fi.Mode().IsRegular()
}

// IsSymlinkPath reports whether rel, in the tree at dir, is a symlink or
// lies under one.
func IsSymlinkPath(dir, rel string) (bool, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return false, err
	}
	defer root.Close()
	segs := strings.Split(path.Clean(rel), "/")
	for i := range segs {
		fi, err := root.Lstat(filepath.FromSlash(strings.Join(segs[:i+1], "/")))
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return true, nil
		}
	}
	return false, nil
}
