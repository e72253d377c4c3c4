package diff

import "strings"

// Parse reads a unified diff and returns its files in input order. Input
// with no file headers at all yields no files and no error. Malformed input
// yields a *ParseError.
//
// Accepted: "git diff" output (including renames, copies, mode changes,
// binary files and GIT binary patch blocks, quoted paths, --no-prefix and
// mnemonic prefixes), plain "diff -u" output with ---/+++ headers, "git
// format-patch" mails (everything before the first file and after a "-- "
// signature line is skipped), and CRLF line endings. Combined diffs of
// merges ("diff --cc") are rejected.
func Parse(data []byte) ([]*File, error) {
	p := &parser{src: string(data)}
	return p.parse()
}

// parser walks the input line by line. Lines are substrings of src, so the
// parsed files share its memory instead of copying every line.
type parser struct {
	src  string
	pos  int // byte offset of the next unread line
	line int // number of the last line read
	// eolAt and eol cache where the line at offset eolAt ends, so that a
	// peek followed by a skip scans the line once.
	eolAt, eol int
}

// lineEnd returns the offset of the terminator of the line at p.pos, or
// len(p.src) for a last line without one.
func (p *parser) lineEnd() int {
	if p.eolAt == p.pos && p.eol > 0 {
		return p.eol
	}
	end := len(p.src)
	if i := strings.IndexByte(p.src[p.pos:], '\n'); i >= 0 {
		end = p.pos + i
	}
	p.eolAt, p.eol = p.pos, end
	return end
}

// peek returns the next line without consuming it, without its terminator
// and without a trailing \r; cr reports whether there was one.
func (p *parser) peek() (text string, cr, ok bool) {
	if p.pos >= len(p.src) {
		return "", false, false
	}
	text = p.src[p.pos:p.lineEnd()]
	if strings.HasSuffix(text, "\r") {
		return text[:len(text)-1], true, true
	}
	return text, false, true
}

// skip consumes the next line.
func (p *parser) skip() {
	p.pos = min(p.lineEnd()+1, len(p.src))
	p.line++
}

// next consumes and returns the next line.
func (p *parser) next() (text string, ok bool) {
	text, _, ok = p.peek()
	if ok {
		p.skip()
	}
	return text, ok
}

// parse is the top level: it looks for file headers and hands each file to
// the git or plain header parser.
func (p *parser) parse() ([]*File, error) {
	var files []*File
	// inPatch is set after a file and cleared by a blank line or a "-- "
	// signature: right after a file a stray +/- line means a broken hunk,
	// while in a preamble (the next mail of a series, the next commit of
	// "git log -p") it is just text.
	inPatch := false
	for {
		start := p.pos
		line, ok := p.next()
		if !ok {
			return files, nil
		}
		var f *File
		var err error
		switch {
		case strings.HasPrefix(line, "diff --git "):
			f, err = p.parseGitFile(line)
		case strings.HasPrefix(line, "diff --cc ") || strings.HasPrefix(line, "diff --combined "):
			return nil, errorf(p.line, "combined diffs of merge commits are not supported")
		case strings.HasPrefix(line, "--- ") && p.nextHasPrefix("+++ "):
			f, err = p.parsePlainFile(line)
		case isBinaryLine(line):
			f, err = p.parsePlainBinary(line)
		case strings.HasPrefix(line, "@@ -"):
			return nil, errorf(p.line, "hunk header %s outside a file: no ---/+++ header before it", excerpt(line))
		case line == "" || line == "-- " || line == "--":
			inPatch = false
		case inPatch && (strings.HasPrefix(line, "+") || strings.HasPrefix(line, "-")):
			return nil, errorf(p.line, "change line %s outside any hunk", excerpt(line))
		}
		if err != nil {
			return nil, err
		}
		if f != nil {
			f.size = p.pos - start
			files = append(files, f)
			inPatch = true
		}
	}
}

// nextHasPrefix reports whether the next line starts with prefix.
func (p *parser) nextHasPrefix(prefix string) bool {
	line, _, ok := p.peek()
	return ok && strings.HasPrefix(line, prefix)
}
