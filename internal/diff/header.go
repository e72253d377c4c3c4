package diff

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// gitHeader collects what the extended header lines of a git file say.
type gitHeader struct {
	newFile, deletedFile bool
	renamed, copied      bool
	oldSet, newSet       bool // OldPath / NewPath came from a line other than "diff --git"
	oldNull, newNull     bool // the ---/+++ or Binary line named /dev/null
}

// parseGitFile parses a file that starts with a "diff --git" line (already
// consumed): its extended header, then a binary marker or ---/+++ and hunks.
func (p *parser) parseGitFile(first string) (*File, error) {
	headerLine := p.line
	a, b, ambiguous, err := splitGitPaths(strings.TrimPrefix(first, "diff --git "))
	if err != nil {
		return nil, errorf(headerLine, "diff --git header %s: %v", excerpt(first), err)
	}
	oldPre, newPre := gitPrefixes(a, b)
	f := &File{OldPath: strings.TrimPrefix(a, oldPre), NewPath: strings.TrimPrefix(b, newPre)}
	var h gitHeader
	if err := p.parseGitHeader(f, &h, oldPre, newPre); err != nil {
		return nil, err
	}
	oldKnown := h.oldSet || h.newFile || h.oldNull
	newKnown := h.newSet || h.deletedFile || h.newNull
	if ambiguous && !(oldKnown && newKnown) {
		return nil, errorf(headerLine, "diff --git header %s: cannot tell where the old path ends and the new one starts", excerpt(first))
	}
	switch {
	case h.newFile || h.oldNull:
		f.Status, f.OldPath = StatusAdded, ""
	case h.deletedFile || h.newNull:
		f.Status, f.NewPath = StatusDeleted, ""
	case h.renamed:
		f.Status = StatusRenamed
	case h.copied:
		f.Status = StatusCopied
	default:
		f.Status = StatusModified
	}
	if err := checkPaths(f); err != nil {
		return nil, errorf(headerLine, "diff --git header %s: %v", excerpt(first), err)
	}
	return f, nil
}

// checkPaths rejects a file whose existing sides have no path, and paths
// holding a NUL byte, which no file system allows.
func checkPaths(f *File) error {
	if strings.ContainsRune(f.OldPath, 0) || strings.ContainsRune(f.NewPath, 0) {
		return errors.New("a path holds a NUL byte")
	}
	if f.Status != StatusAdded && f.OldPath == "" {
		return errors.New("empty old path")
	}
	if f.Status != StatusDeleted && f.NewPath == "" {
		return errors.New("empty new path")
	}
	return nil
}

// parseGitHeader consumes the extended header lines of a git file and
// whatever follows them: a binary marker, or ---/+++ and the hunks.
func (p *parser) parseGitHeader(f *File, h *gitHeader, oldPre, newPre string) error {
	for {
		line, _, ok := p.peek()
		if !ok {
			return nil
		}
		n := p.line + 1
		key, val := headerField(line)
		if strings.HasSuffix(key, "mode ") && !isMode(val) {
			return errorf(n, "%s%s is not an octal file mode", key, excerpt(val))
		}
		switch key {
		case "old mode ":
			f.OldMode = val
		case "new mode ":
			f.NewMode = val
		case "deleted file mode ":
			f.OldMode, h.deletedFile = val, true
		case "new file mode ":
			f.NewMode, h.newFile = val, true
		case "rename from ", "rename old ", "copy from ":
			path, err := headerPath(val)
			if err != nil {
				return errorf(n, "%s path %s: %v", strings.TrimSpace(key), excerpt(val), err)
			}
			f.OldPath, h.oldSet = path, true
			h.renamed = h.renamed || key != "copy from "
			h.copied = h.copied || key == "copy from "
		case "rename to ", "rename new ", "copy to ":
			path, err := headerPath(val)
			if err != nil {
				return errorf(n, "%s path %s: %v", strings.TrimSpace(key), excerpt(val), err)
			}
			f.NewPath, h.newSet = path, true
			h.renamed = h.renamed || key != "copy to "
			h.copied = h.copied || key == "copy to "
		case "similarity index ":
			v, err := strconv.Atoi(strings.TrimSuffix(val, "%"))
			if err != nil || v < 0 || v > 100 || !strings.HasSuffix(val, "%") {
				return errorf(n, "similarity index %s is not a percentage", excerpt(val))
			}
			f.Similarity = v
		case "dissimilarity index ":
			// Only written for complete rewrites; nothing to keep.
		case "index ":
			if err := parseIndexLine(f, val); err != nil {
				return errorf(n, "index line %s: %v", excerpt(line), err)
			}
		default:
			switch {
			case isBinaryLine(line):
				p.skip()
				f.Binary = true
				h.oldNull = strings.HasPrefix(line, "Binary files /dev/null and ")
				h.newNull = strings.HasSuffix(line, " and /dev/null differ")
				return nil
			case line == "GIT binary patch":
				p.skip()
				f.Binary = true
				p.skipBinaryPatch()
				return nil
			case strings.HasPrefix(line, "--- "):
				p.skip()
				return p.parseFileLines(f, h, line, oldPre, newPre)
			default:
				// Not a header line: the file has no content diff.
				return nil
			}
		}
		p.skip()
	}
}

// headerFields are the extended git header keys, each with its separator.
var headerFields = [...]string{
	"old mode ", "new mode ", "deleted file mode ", "new file mode ",
	"rename from ", "rename to ", "rename old ", "rename new ",
	"copy from ", "copy to ", "similarity index ", "dissimilarity index ",
	"index ",
}

// headerField splits an extended git header line into its key and value;
// key is empty for other lines.
func headerField(line string) (key, val string) {
	for _, k := range headerFields {
		if strings.HasPrefix(line, k) {
			return k, line[len(k):]
		}
	}
	return "", ""
}

// parseIndexLine reads "index <old>..<new>[ <mode>]".
func parseIndexLine(f *File, val string) error {
	hashes, mode, _ := strings.Cut(val, " ")
	oldHash, newHash, ok := strings.Cut(hashes, "..")
	if !ok || oldHash == "" || newHash == "" {
		return errors.New("want <old>..<new>")
	}
	f.OldHash, f.NewHash = oldHash, newHash
	if mode != "" {
		if !isMode(mode) {
			return fmt.Errorf("%q is not an octal file mode", mode)
		}
		if f.OldMode == "" {
			f.OldMode = mode
		}
		if f.NewMode == "" {
			f.NewMode = mode
		}
	}
	return nil
}

// isMode reports whether s is an octal file mode such as 100644.
func isMode(s string) bool {
	if s == "" || len(s) > 7 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isOctal(s[i]) {
			return false
		}
	}
	return true
}

// skipBinaryPatch consumes the "literal N" / "delta N" blocks of a GIT binary
// patch, each a run of encoded lines ended by a blank line.
func (p *parser) skipBinaryPatch() {
	for {
		line, _, ok := p.peek()
		if !ok || !(strings.HasPrefix(line, "literal ") || strings.HasPrefix(line, "delta ")) {
			return
		}
		p.skip()
		for {
			line, ok := p.next()
			if !ok || line == "" {
				break
			}
		}
	}
}

// isBinaryLine reports whether line is a "Binary files X and Y differ" marker.
func isBinaryLine(line string) bool {
	return strings.HasPrefix(line, "Binary files ") && strings.HasSuffix(line, " differ")
}
