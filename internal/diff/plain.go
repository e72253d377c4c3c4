package diff

import "strings"

// parseFileLines handles a "---" line (already consumed), the "+++" line that
// must follow it, and the hunks after them.
func (p *parser) parseFileLines(f *File, h *gitHeader, minus, oldPre, newPre string) error {
	plus, ok := p.next()
	if !ok || !strings.HasPrefix(plus, "+++ ") {
		return errorf(p.line, "--- line %s is not followed by a +++ line", excerpt(minus))
	}
	oldPath, err := headerPath(minus[4:])
	if err != nil {
		return errorf(p.line-1, "--- path %s: %v", excerpt(minus[4:]), err)
	}
	newPath, err := headerPath(plus[4:])
	if err != nil {
		return errorf(p.line, "+++ path %s: %v", excerpt(plus[4:]), err)
	}
	if oldPath == devNull {
		h.oldNull = true
	} else {
		f.OldPath, h.oldSet = strings.TrimPrefix(oldPath, oldPre), true
	}
	if newPath == devNull {
		h.newNull = true
	} else {
		f.NewPath, h.newSet = strings.TrimPrefix(newPath, newPre), true
	}
	if h.oldNull && h.newNull {
		return errorf(p.line, "both sides of the file are /dev/null")
	}
	return p.parseHunks(f)
}

// parsePlainFile parses a file that starts with a "---" line (already
// consumed) and no "diff --git" line.
func (p *parser) parsePlainFile(minus string) (*File, error) {
	plus, _, _ := p.peek()
	oldRaw, err := headerPath(minus[4:])
	if err != nil {
		return nil, errorf(p.line, "--- path %s: %v", excerpt(minus[4:]), err)
	}
	newRaw, err := headerPath(plus[4:])
	if err != nil {
		return nil, errorf(p.line+1, "+++ path %s: %v", excerpt(plus[4:]), err)
	}
	oldPre, newPre := plainPrefixes(oldRaw, newRaw)
	headerLine := p.line
	f := &File{}
	var h gitHeader
	if err := p.parseFileLines(f, &h, minus, oldPre, newPre); err != nil {
		return nil, err
	}
	switch {
	case h.oldNull:
		f.Status = StatusAdded
	case h.newNull:
		f.Status = StatusDeleted
	default:
		f.Status = StatusModified
	}
	if err := checkPaths(f); err != nil {
		return nil, errorf(headerLine, "file header %s: %v", excerpt(minus), err)
	}
	return f, nil
}

// parsePlainBinary turns a stand-alone "Binary files X and Y differ" line
// (as diff -r writes it, already consumed) into a binary file.
func (p *parser) parsePlainBinary(line string) (*File, error) {
	body := strings.TrimSuffix(strings.TrimPrefix(line, "Binary files "), " differ")
	var cands [][2]string
	for i := strings.Index(body, " and "); i >= 0; {
		x, errX := binaryPath(body[:i])
		y, errY := binaryPath(body[i+5:])
		if errX == nil && errY == nil {
			cands = append(cands, [2]string{x, y})
		}
		j := strings.Index(body[i+1:], " and ")
		if j < 0 {
			break
		}
		i += 1 + j
	}
	var pick [2]string
	found := false
	for _, c := range cands {
		oldPre, newPre := plainPrefixes(c[0], c[1])
		if c[0] == devNull || c[1] == devNull || stripPrefix(c[0], oldPre) == stripPrefix(c[1], newPre) {
			pick, found = c, true
			break
		}
	}
	if !found {
		if len(cands) != 1 {
			return nil, errorf(p.line, "binary marker %s: cannot tell the two paths apart", excerpt(line))
		}
		pick = cands[0]
	}
	oldPre, newPre := plainPrefixes(pick[0], pick[1])
	f := &File{Binary: true, Status: StatusModified}
	f.OldPath = stripPrefix(pick[0], oldPre)
	f.NewPath = stripPrefix(pick[1], newPre)
	switch {
	case f.OldPath == devNull && f.NewPath == devNull:
		return nil, errorf(p.line, "both sides of the binary file are /dev/null")
	case f.OldPath == devNull:
		f.Status, f.OldPath = StatusAdded, ""
	case f.NewPath == devNull:
		f.Status, f.NewPath = StatusDeleted, ""
	}
	if err := checkPaths(f); err != nil {
		return nil, errorf(p.line, "binary marker %s: %v", excerpt(line), err)
	}
	return f, nil
}

// binaryPath decodes one path of a binary marker line, which git quotes like
// any other path.
func binaryPath(s string) (string, error) {
	if strings.HasPrefix(s, `"`) {
		return unquoteAll(s)
	}
	return s, nil
}
