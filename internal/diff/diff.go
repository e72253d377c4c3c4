// Package diff parses unified diffs (git diff, diff -u, .patch and
// format-patch mails) into files and hunks with new-side line numbers, renders
// them back as unified diffs or as numbered text for prompts, and decides
// which files are not worth reviewing (lock files, generated, vendored, …).
//
// The parser is strict about structure: a hunk whose body does not match its
// header, or a change line outside any hunk, is reported as a *ParseError
// naming the input line. Lines before the first file header (mail headers,
// commit messages, diffstats) are ignored.
package diff

import "math"

// FileStatus says what happened to a file in a diff.
type FileStatus string

// The file statuses a diff can describe.
const (
	StatusAdded    FileStatus = "added"
	StatusDeleted  FileStatus = "deleted"
	StatusModified FileStatus = "modified"
	StatusRenamed  FileStatus = "renamed"
	StatusCopied   FileStatus = "copied"
)

// LineKind says whether a hunk line is context, added or deleted. Its value is
// the marker character the line carries in a unified diff.
type LineKind byte

// The kinds of hunk line.
const (
	Context LineKind = ' '
	Added   LineKind = '+'
	Deleted LineKind = '-'
)

// Line is one line of a hunk body.
type Line struct {
	// Kind is context, added or deleted.
	Kind LineKind
	// Text is the line's content without its marker and without any line
	// terminator (a trailing \r of a CRLF line is removed too).
	Text string
	// OldNo is the line's number in the old file; 0 for added lines.
	OldNo int
	// NewNo is the line's number in the new file; 0 for deleted lines.
	NewNo int
	// NoNewline is set when the line is the last of its side and that side
	// has no newline at end of file ("\ No newline at end of file").
	NoNewline bool
}

// Hunk is one "@@ -a,b +c,d @@" block.
type Hunk struct {
	// OldStart and OldCount give the old-side range from the header. When
	// OldCount is 0, OldStart is the line after which the hunk applies.
	OldStart, OldCount int
	// NewStart and NewCount give the new-side range from the header. When
	// NewCount is 0, NewStart is the line after which the deletion happened.
	NewStart, NewCount int
	// Section is the text after the second "@@" (usually the enclosing
	// function), without the separating space.
	Section string
	// Lines is the hunk body in order.
	Lines []Line
}

// File is one file's part of a diff.
type File struct {
	// OldPath is the path before the change, without any a/ prefix; empty
	// for added files.
	OldPath string
	// NewPath is the path after the change, without any b/ prefix; empty for
	// deleted files.
	NewPath string
	// Status says whether the file was added, deleted, modified, renamed or
	// copied.
	Status FileStatus
	// Binary is set for binary files; they have no hunks.
	Binary bool
	// CRLF is set when any hunk line of the file ended with \r\n.
	CRLF bool
	// OldMode and NewMode are the file modes from the extended git header
	// ("100644", "100755", "120000", …); empty when the diff does not say.
	OldMode, NewMode string
	// OldHash and NewHash are the blob ids from the "index" line; empty when
	// the diff has none.
	OldHash, NewHash string
	// Similarity is the percentage from "similarity index" for renames and
	// copies; 0 when absent.
	Similarity int
	// Hunks are the file's hunks in order.
	Hunks []Hunk

	// size is the number of input bytes the file's part of the diff took;
	// 0 for files that were not produced by Parse.
	size int
}

// Path returns the path a reviewer should look at: NewPath, or OldPath for a
// deleted file.
func (f *File) Path() string {
	if f.NewPath == "" {
		return f.OldPath
	}
	return f.NewPath
}

// AddedLines returns the new-side numbers of the added lines, ascending.
func (f *File) AddedLines() []int {
	var out []int
	for i := range f.Hunks {
		for _, l := range f.Hunks[i].Lines {
			if l.Kind == Added {
				out = append(out, l.NewNo)
			}
		}
	}
	return out
}

// ChangedNewLines returns, ascending and without duplicates, the new-side
// lines a finding can be anchored to: every added line, plus one line for each
// pure deletion (a run of deleted lines with no added line next to it). A
// deletion is anchored to the new-side line that follows it in the hunk, or,
// at the end of a hunk, to the line before it (line 1 at the top of a file).
// A deleted file has no new side and returns nil.
func (f *File) ChangedNewLines() []int {
	if f.Status == StatusDeleted {
		return nil
	}
	var out []int
	add := func(n int) {
		if n < 1 {
			n = 1
		}
		if len(out) == 0 || out[len(out)-1] < n {
			out = append(out, n)
		}
	}
	for i := range f.Hunks {
		h := &f.Hunks[i]
		next := h.NewStart // number the next new-side line would get
		if h.NewCount == 0 {
			next = h.NewStart + 1
		}
		lines := h.Lines
		for j := 0; j < len(lines); j++ {
			switch lines[j].Kind {
			case Added:
				add(lines[j].NewNo)
				next = lines[j].NewNo + 1
			case Context:
				next = lines[j].NewNo + 1
			case Deleted:
				end := j
				for end < len(lines) && lines[end].Kind == Deleted {
					end++
				}
				before := j > 0 && lines[j-1].Kind == Added
				after := end < len(lines) && lines[end].Kind == Added
				if !before && !after {
					if end < len(lines) {
						add(next)
					} else {
						add(next - 1)
					}
				}
				j = end - 1
			}
		}
	}
	return out
}

// Stats returns the number of added and deleted lines.
func (f *File) Stats() (added, deleted int) {
	for i := range f.Hunks {
		for _, l := range f.Hunks[i].Lines {
			switch l.Kind {
			case Added:
				added++
			case Deleted:
				deleted++
			}
		}
	}
	return added, deleted
}

// Size returns the length in bytes of the file's part of the diff: the input
// it was parsed from, or its rendered Text for files built by hand.
func (f *File) Size() int {
	if f.size > 0 {
		return f.size
	}
	return len(f.Text())
}

// NearestChange returns the distance from line to the nearest line in
// changed, or math.MaxInt when changed is empty, so that a comparison with
// any window fails. changed need not be sorted.
func NearestChange(changed []int, line int) int {
	best := math.MaxInt
	for _, c := range changed {
		d := c - line
		if d < 0 {
			d = -d
		}
		if d < best {
			best = d
		}
	}
	return best
}
