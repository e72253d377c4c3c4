package diff

import (
	"errors"
	"strconv"
	"strings"
)

// Text renders the file as a git-style unified diff that Parse reads back
// into the same structure. Paths get a/ and b/ prefixes and are quoted the
// way git quotes them; hunk lines end in \r\n when the file is CRLF. A
// binary file is rendered as a "Binary files … differ" marker without its
// data.
func (f *File) Text() string {
	var b strings.Builder
	if f.size > 0 {
		b.Grow(f.size + 64)
	}
	oldName, newName := f.OldPath, f.NewPath
	if oldName == "" {
		oldName = newName
	}
	if newName == "" {
		newName = oldName
	}
	b.WriteString("diff --git ")
	b.WriteString(gitLinePaths("a/"+oldName, "b/"+newName))
	b.WriteByte('\n')
	f.writeModes(&b)
	if f.Similarity > 0 {
		b.WriteString("similarity index " + strconv.Itoa(f.Similarity) + "%\n")
	}
	switch f.Status {
	case StatusRenamed:
		b.WriteString("rename from " + quotePath(f.OldPath) + "\nrename to " + quotePath(f.NewPath) + "\n")
	case StatusCopied:
		b.WriteString("copy from " + quotePath(f.OldPath) + "\ncopy to " + quotePath(f.NewPath) + "\n")
	}
	if f.OldHash != "" || f.NewHash != "" {
		b.WriteString("index " + f.OldHash + ".." + f.NewHash)
		if f.indexMode() {
			b.WriteString(" " + f.OldMode)
		}
		b.WriteByte('\n')
	}
	oldSide, newSide := "a/"+oldName, "b/"+newName
	if f.Status == StatusAdded {
		oldSide = devNull
	}
	if f.Status == StatusDeleted {
		newSide = devNull
	}
	if f.Binary {
		b.WriteString("Binary files " + quotePath(oldSide) + " and " + quotePath(newSide) + " differ\n")
		return b.String()
	}
	if len(f.Hunks) == 0 {
		return b.String()
	}
	writeHeaderPath(&b, "--- ", oldSide)
	writeHeaderPath(&b, "+++ ", newSide)
	eol := "\n"
	if f.CRLF {
		eol = "\r\n"
	}
	for i := range f.Hunks {
		h := &f.Hunks[i]
		b.WriteString(headerText(h))
		if h.Section != "" {
			b.WriteByte(' ')
			b.WriteString(h.Section)
		}
		b.WriteByte('\n')
		for _, l := range h.Lines {
			b.WriteByte(byte(l.Kind))
			b.WriteString(l.Text)
			b.WriteString(eol)
			if l.NoNewline {
				b.WriteString("\\ No newline at end of file\n")
			}
		}
	}
	return b.String()
}

// gitLinePaths returns the operand of a "diff --git" line for paths a and b
// (prefixes attached). Unquoted paths with spaces can be split in more than
// one place; when the parser would not split them back into a and b, both
// are quoted, which git's quoting allows for any path.
func gitLinePaths(a, b string) string {
	qa, qb := quotePath(a), quotePath(b)
	if qa == a && qb == b {
		if x, y, ambiguous, err := splitGitPaths(a + " " + b); err != nil || ambiguous || x != a || y != b {
			return quoteAlways(a) + " " + quoteAlways(b)
		}
	}
	return qa + " " + qb
}

// indexMode reports whether the mode belongs on the index line: both sides
// have the same known mode and no mode line says it.
func (f *File) indexMode() bool {
	return f.OldMode != "" && f.OldMode == f.NewMode &&
		f.Status != StatusAdded && f.Status != StatusDeleted
}

// writeModes writes the mode lines of the extended header.
func (f *File) writeModes(b *strings.Builder) {
	switch f.Status {
	case StatusAdded:
		if f.NewMode != "" {
			b.WriteString("new file mode " + f.NewMode + "\n")
		}
		if f.OldMode != "" {
			b.WriteString("old mode " + f.OldMode + "\n")
		}
		return
	case StatusDeleted:
		if f.OldMode != "" {
			b.WriteString("deleted file mode " + f.OldMode + "\n")
		}
		if f.NewMode != "" {
			b.WriteString("new mode " + f.NewMode + "\n")
		}
		return
	}
	hasIndex := f.OldHash != "" || f.NewHash != ""
	if f.OldMode == f.NewMode && (hasIndex || f.OldMode == "") {
		return
	}
	if f.OldMode != "" {
		b.WriteString("old mode " + f.OldMode + "\n")
	}
	if f.NewMode != "" {
		b.WriteString("new mode " + f.NewMode + "\n")
	}
}

// writeHeaderPath writes a ---/+++ line. Like git, it ends an unquoted name
// that contains a space with a tab, so that the name's end is unambiguous.
func writeHeaderPath(b *strings.Builder, marker, name string) {
	b.WriteString(marker)
	q := quotePath(name)
	b.WriteString(q)
	if q == name && strings.Contains(name, " ") {
		b.WriteByte('\t')
	}
	b.WriteByte('\n')
}

// Numbered renders the hunks for a prompt, every line carrying its new-side
// number: "  12 + added", "     - deleted" (no new number), "  13   context".
// Each hunk opens with "@@ new lines 10-20 @@" followed by its section text;
// a hunk that only deletes opens with "@@ lines deleted after new line N @@".
// A file without hunks (binary, rename or mode change only) renders as "".
func (f *File) Numbered() string {
	maxNo := 0
	size := 0
	for i := range f.Hunks {
		h := &f.Hunks[i]
		maxNo = max(maxNo, h.NewStart+h.NewCount-1)
		for _, l := range h.Lines {
			size += len(l.Text) + 8
		}
	}
	width := max(4, len(strconv.Itoa(maxNo)))
	pad := strings.Repeat(" ", width)
	var b strings.Builder
	b.Grow(size + 32*len(f.Hunks))
	for i := range f.Hunks {
		h := &f.Hunks[i]
		if h.NewCount > 0 {
			b.WriteString("@@ new lines " + strconv.Itoa(h.NewStart) + "-" + strconv.Itoa(h.NewStart+h.NewCount-1) + " @@")
		} else {
			b.WriteString("@@ lines deleted after new line " + strconv.Itoa(h.NewStart) + " @@")
		}
		if h.Section != "" {
			b.WriteString(" " + h.Section)
		}
		b.WriteByte('\n')
		for _, l := range h.Lines {
			if l.Kind == Deleted {
				b.WriteString(pad)
			} else {
				n := strconv.Itoa(l.NewNo)
				b.WriteString(pad[:width-len(n)])
				b.WriteString(n)
			}
			b.WriteByte(' ')
			if l.Kind == Context {
				b.WriteByte(' ')
			} else {
				b.WriteByte(byte(l.Kind))
			}
			b.WriteByte(' ')
			b.WriteString(l.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// NumberedText parses the diff of a single file and renders it as
// Numbered does. It is the form stages put in prompts.
func NumberedText(text string) (string, error) {
	files, err := Parse([]byte(text))
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", errors.New("no file in diff")
	}
	return files[0].Numbered(), nil
}
