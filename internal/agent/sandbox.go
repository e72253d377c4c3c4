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
	"strconv"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/redact"
	"github.com/reviewfleet/reviewfleet/internal/untrusted"
)

// toolError is a failure reported to the model as the tool's result text.
// Its message never contains anything read from outside the snapshot.
// outcome classifies it for the run's record (OutcomeError when empty).
type toolError struct {
	msg     string
	outcome ToolOutcome
	// missing marks "no such file or directory".
	missing bool
}

func (e *toolError) Error() string { return e.msg }

// toolErrorf formats a tool error. Its arguments are often the model's
// own (a path, a pattern), which text read from the repository may have
// steered: each is kept to one line, so a tool error cannot carry text
// onto lines of its own outside any fence.
func toolErrorf(format string, args ...any) error {
	for i, a := range args {
		switch v := a.(type) {
		case string:
			args[i] = untrusted.OneLine(v)
		case error:
			args[i] = untrusted.OneLine(v.Error())
		case fmt.Stringer:
			args[i] = untrusted.OneLine(v.String())
		}
	}
	return &toolError{msg: fmt.Sprintf(format, args...)}
}

// refusedf is a tool error for a call the sandbox or the budgets decline
// by policy, as opposed to a call that failed.
func refusedf(format string, args ...any) error {
	te := toolErrorf(format, args...).(*toolError)
	te.outcome = OutcomeRefused
	return te
}

// missingf is the tool error of a path that does not exist in the
// snapshot.
func missingf(format string, args ...any) error {
	te := toolErrorf(format, args...).(*toolError)
	te.missing = true
	return te
}

// Messages of the sandbox's refusals.
const (
	msgEscape   = "path escapes the repository root"
	msgAbsolute = "absolute paths are refused: use a path relative to the repository root"
	msgSymlink  = "is a symbolic link: the sandbox does not follow links"
	msgHardLink = "has several hard links: the sandbox cannot tell where it comes from"
)

// sandbox confines file access to the snapshot root. Every access goes
// through an os.Root, so no path, symlink or ".." can reach outside it; on
// top of that the sandbox follows no symlink at all (one inside the root
// could still name a denied file), refuses the paths of its deny list, and
// refuses regular files with more than one hard link, which os.Root cannot
// tell from files outside the root.
type sandbox struct {
	root         *os.Root
	maxFileBytes int64
	deny         denyList
	// beforeOpen, when set, runs between the check of a path component
	// and its open; tests use it to swap the path under the sandbox.
	beforeOpen func(rel string)
	// redactor replaces the secrets in every file read, with one
	// numbering for the run.
	redactor *redact.Redactor
}

// newSandbox opens the snapshot at root. deny holds the globs of refused
// paths (DefaultDeny when empty; .git is always refused). The sandbox must
// be closed.
func newSandbox(root string, maxFileBytes int64, deny []string) (*sandbox, error) {
	if strings.TrimSpace(root) == "" {
		return nil, errors.New("snapshot root is empty")
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("open snapshot root %q: %w", root, err)
	}
	return &sandbox{root: r, maxFileBytes: maxFileBytes, deny: newDenyList(deny), redactor: redact.New()}, nil
}

// close releases the root.
func (s *sandbox) close() error { return s.root.Close() }

// cleanRel validates a model-supplied path and returns it cleaned,
// slash-separated and relative to the root ("." for the root itself).
func cleanRel(p string) (string, error) {
	p = strings.TrimSpace(p)
	// Prompts show an unusual name (a tab, a quote, a backslash, a newline)
	// Go-quoted, so a model copies it back quoted. Any name that starts
	// with a quote is shown quoted itself, so a whole quoted string can
	// only mean the name inside it.
	if len(p) >= 2 && p[0] == '"' && p[len(p)-1] == '"' {
		if u, err := strconv.Unquote(p); err == nil {
			p = u
		}
	}
	if p == "" {
		return ".", nil
	}
	if strings.ContainsRune(p, 0) {
		return "", toolErrorf("the path contains a NUL byte")
	}
	slashed := filepath.ToSlash(p)
	if path.IsAbs(slashed) || filepath.IsAbs(p) || filepath.VolumeName(p) != "" {
		return "", refusedf(msgAbsolute)
	}
	clean := path.Clean(slashed)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", refusedf(msgEscape)
	}
	return clean, nil
}

// check validates a model-supplied path against the policy and returns it
// cleaned.
func (s *sandbox) check(p string) (string, error) {
	rel, err := cleanRel(p)
	if err != nil {
		return "", err
	}
	if s.deny.denied(rel) {
		return "", refusedf("%s: %s", rel, msgDenied)
	}
	return rel, nil
}

// openDir opens the directory rel (cleaned, relative) as a root of its own,
// descending one component at a time: each component must be a directory,
// not a symlink, and the directory opened must be the one checked, so a
// component swapped for a symlink between the check and the open is caught.
// The caller closes the returned root.
func (s *sandbox) openDir(rel string) (*os.Root, error) {
	cur, err := s.root.OpenRoot(".")
	if err != nil {
		return nil, toolErrorf("cannot open the repository root")
	}
	if rel == "." {
		return cur, nil
	}
	segs := strings.Split(rel, "/")
	for i, name := range segs {
		shown := strings.Join(segs[:i+1], "/")
		next, err := s.enterDir(cur, name, shown)
		cur.Close()
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// enterDir opens the subdirectory name of dir; shown names it in errors.
func (s *sandbox) enterDir(dir *os.Root, name, shown string) (*os.Root, error) {
	fi, err := dir.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, missingf("no such file or directory: %s", shown)
	case err != nil:
		return nil, toolErrorf("cannot stat %s", shown)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, refusedf("%s %s", shown, msgSymlink)
	case !fi.IsDir():
		return nil, toolErrorf("%s is not a directory: use read_file", shown)
	}
	if s.beforeOpen != nil {
		s.beforeOpen(shown)
	}
	sub, err := dir.OpenRoot(name)
	if err != nil {
		return nil, toolErrorf("cannot open %s", shown)
	}
	ofi, err := sub.Stat(".")
	if err != nil || !os.SameFile(fi, ofi) {
		sub.Close()
		return nil, toolErrorf("%s changed while it was being opened", shown)
	}
	return sub, nil
}

// readFile returns the content of the regular file at the model-supplied
// path p, refusing denied paths, symlinks, directories, devices, pipes,
// hard-linked files and files over the size limit.
func (s *sandbox) readFile(p string) (data []byte, rel string, err error) {
	rel, err = s.check(p)
	if err != nil {
		return nil, "", err
	}
	if rel == "." {
		return nil, "", toolErrorf(". is a directory: use list_dir")
	}
	dir, err := s.openDir(path.Dir(rel))
	if err != nil {
		return nil, "", err
	}
	defer dir.Close()
	data, err = s.readIn(dir, path.Base(rel), rel)
	if err != nil {
		return nil, "", err
	}
	return data, rel, nil
}

// readIn reads the regular file name of dir; rel names it in errors.
func (s *sandbox) readIn(dir *os.Root, name, rel string) ([]byte, error) {
	fi, err := dir.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, missingf("no such file or directory: %s", rel)
	}
	if err != nil {
		return nil, toolErrorf("cannot stat %s", rel)
	}
	if err := s.checkRegular(fi, rel); err != nil {
		return nil, err
	}
	if s.beforeOpen != nil {
		s.beforeOpen(rel)
	}
	f, err := openNoBlock(dir, name)
	if err != nil {
		return nil, toolErrorf("cannot open %s", rel)
	}
	defer f.Close()
	// The name may have been swapped for a symlink or another file between
	// the Lstat and the open: check the opened file itself.
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
		return nil, refusedf("%s is larger than the %d-byte limit", rel, s.maxFileBytes)
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
	case fi.Mode()&fs.ModeSymlink != 0:
		return refusedf("%s %s", rel, msgSymlink)
	case fi.IsDir():
		return toolErrorf("%s is a directory: use list_dir", rel)
	case !fi.Mode().IsRegular():
		return toolErrorf("%s is not a regular file", rel)
	case linkCount(fi) > 1:
		return refusedf("%s %s", rel, msgHardLink)
	case fi.Size() > s.maxFileBytes:
		return refusedf("%s is too large (%d bytes; the limit is %d)", rel, fi.Size(), s.maxFileBytes)
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
