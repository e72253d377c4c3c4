package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/redact"
)

// toolError is a failure reported to the model as the tool's result text.
// Its message never contains anything read from outside the snapshot.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func toolErrorf(format string, args ...any) error {
	return &toolError{msg: fmt.Sprintf(format, args...)}
}

// Messages of the sandbox's refusals.
const (
	msgEscape   = "path escapes the repository root"
	msgAbsolute = "absolute paths are refused: use a path relative to the repository root"
)

// sandbox confines file access to the snapshot root.
type sandbox struct {
	root         string // absolute and free of symlinks
	maxFileBytes int64
	// redactor replaces the secrets in every file read, with one
	// numbering for the run.
	redactor *redact.Redactor
}

// newSandbox opens the snapshot at root.
func newSandbox(root string, maxFileBytes int64) (*sandbox, error) {
	if strings.TrimSpace(root) == "" {
		return nil, errors.New("snapshot root is empty")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("resolve snapshot root %q: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("resolve snapshot root %q: %w", root, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("stat snapshot root %q: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("snapshot root %q is not a directory", root)
	}
	return &sandbox{root: real, maxFileBytes: maxFileBytes, redactor: redact.New()}, nil
}

// cleanRel validates a model-supplied path and returns it cleaned,
// slash-separated and relative to the root ("." for the root itself).
func cleanRel(p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return ".", nil
	}
	if strings.ContainsRune(p, 0) {
		return "", toolErrorf("the path contains a NUL byte")
	}
	slashed := filepath.ToSlash(p)
	if path.IsAbs(slashed) || filepath.IsAbs(p) || filepath.VolumeName(p) != "" {
		return "", toolErrorf(msgAbsolute)
	}
	clean := path.Clean(slashed)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", toolErrorf(msgEscape)
	}
	return clean, nil
}

// resolve maps a model-supplied path to an absolute path inside the root,
// following symlinks, and refuses anything that ends up outside.
func (s *sandbox) resolve(p string) (abs, rel string, err error) {
	rel, err = cleanRel(p)
	if err != nil {
		return "", "", err
	}
	joined := filepath.Join(s.root, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(joined)
	if err != nil {
		// The error text may name a symlink target outside the root: it
		// is not passed on.
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", toolErrorf("no such file or directory: %s", rel)
		}
		return "", "", toolErrorf("cannot resolve %s", rel)
	}
	if !s.contains(real) {
		return "", "", toolErrorf(msgEscape)
	}
	return real, rel, nil
}

// contains reports whether the absolute, symlink-free path p is the root or
// lies under it.
func (s *sandbox) contains(p string) bool {
	if p == s.root {
		return true
	}
	prefix := s.root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	return strings.HasPrefix(p, prefix)
}

// readFile returns the content of the regular file at the model-supplied
// path p, refusing directories, devices, pipes and files over the size limit.
func (s *sandbox) readFile(p string) (data []byte, rel string, err error) {
	abs, rel, err := s.resolve(p)
	if err != nil {
		return nil, "", err
	}
	data, err = s.readRegular(abs, rel)
	if err != nil {
		return nil, "", err
	}
	return data, rel, nil
}

// readRegular reads the file at abs (already inside the root); rel names it
// in error messages.
func (s *sandbox) readRegular(abs, rel string) ([]byte, error) {
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, toolErrorf("cannot stat %s", rel)
	}
	if err := s.checkRegular(fi, rel); err != nil {
		return nil, err
	}
	f, err := openNoBlock(abs)
	if err != nil {
		return nil, toolErrorf("cannot open %s", rel)
	}
	defer f.Close()
	// The file may have been swapped between the stat and the open: check
	// the opened file itself.
	ofi, err := f.Stat()
	if err != nil || !os.SameFile(fi, ofi) {
		return nil, toolErrorf("%s changed while it was being opened", rel)
	}
	if err := s.checkRegular(ofi, rel); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, s.maxFileBytes+1))
	if err != nil {
		return nil, toolErrorf("cannot read %s", rel)
	}
	if int64(len(data)) > s.maxFileBytes {
		return nil, toolErrorf("%s is larger than the %d-byte limit", rel, s.maxFileBytes)
	}
	if isBinary(data) {
		return data, nil
	}
	// Every tool and evidence check reads through here: the model never
	// sees a secret, and checks compare against the text it was shown.
	return s.redactor.Bytes(data), nil
}

func (s *sandbox) checkRegular(fi fs.FileInfo, rel string) error {
	switch {
	case fi.IsDir():
		return toolErrorf("%s is a directory: use list_dir", rel)
	case !fi.Mode().IsRegular():
		return toolErrorf("%s is not a regular file", rel)
	case fi.Size() > s.maxFileBytes:
		return toolErrorf("%s is too large (%d bytes; the limit is %d)", rel, fi.Size(), s.maxFileBytes)
	}
	return nil
}

// isBinary reports whether data looks like a binary file: a NUL byte in its
// first 8000 bytes.
func isBinary(data []byte) bool {
	if len(data) > 8000 {
		data = data[:8000]
	}
	return bytes.IndexByte(data, 0) >= 0
}
