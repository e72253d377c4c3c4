package diff

import (
	"path"
	"strings"
)

// Reasons Classify gives for skipping a file. They are stable identifiers,
// stored with the review.
const (
	// ReasonBinary: the file is binary (git says so, or a changed line
	// holds a NUL byte); there is no text to review.
	ReasonBinary = "binary"
	// ReasonSubmodule: the entry is a submodule (mode 160000); its diff is
	// a commit id, not code.
	ReasonSubmodule = "submodule"
	// ReasonSymlink: the entry is a symbolic link (mode 120000); its diff
	// is the target path, not code.
	ReasonSymlink = "symlink"
	// ReasonDeleted: the file was deleted; nothing is left on the new side.
	ReasonDeleted = "deleted"
	// ReasonVendored: a directory of the path is vendor, third_party or
	// node_modules; the code belongs to another project.
	ReasonVendored = "vendored"
	// ReasonLockFile: a dependency lock file (go.sum, package-lock.json,
	// *.lock, …), written by tools.
	ReasonLockFile = "lock_file"
	// ReasonGenerated: a generated file, known by its name (*.pb.go,
	// *_gen.go, *.min.js, zz_generated*, …) or by a generator's marker
	// comment near the top of the file.
	ReasonGenerated = "generated"
	// ReasonIgnored: the path matches one of ClassifyOptions.IgnoreGlobs.
	ReasonIgnored = "ignored"
	// ReasonNoChanges: the file has no content changes (a rename, copy or
	// mode change only, or an empty new file).
	ReasonNoChanges = "no_changes"
	// ReasonTooLarge: the file's diff is longer than
	// ClassifyOptions.MaxFileDiffChars.
	ReasonTooLarge = "too_large"
)

// Git file modes of entries that are not files.
const (
	ModeSymlink   = "120000"
	ModeSubmodule = "160000"
)

// DefaultMaxFileDiffChars is the file diff size above which Classify skips a
// file when ClassifyOptions.MaxFileDiffChars is 0.
const DefaultMaxFileDiffChars = 100_000

// ClassifyOptions tunes Classify.
type ClassifyOptions struct {
	// MaxFileDiffChars is the largest file diff, in bytes of diff text, that
	// is reviewed. 0 means DefaultMaxFileDiffChars (100 000); a negative
	// value disables the limit.
	MaxFileDiffChars int
	// IgnoreGlobs are extra patterns of paths to skip, matched as MatchGlob
	// does: "*" within a path segment, "**" across segments, a pattern
	// without a slash matches the base name at any depth, and a trailing
	// slash matches everything under a directory. Default: none.
	IgnoreGlobs []string
}

// Classify reports whether f should be left out of a review and why. The
// checks run in this order and the first that matches gives the reason:
// binary, deleted, symlink, submodule, vendored, lock_file, generated (by name), ignored,
// no_changes, generated (by marker comment), too_large. Paths are those of
// f.Path(). A malformed glob never matches; validate globs with CheckGlob
// when reading configuration.
func Classify(f *File, opts ClassifyOptions) (skip bool, reason string) {
	if f == nil {
		return true, ReasonNoChanges
	}
	p := f.Path()
	switch {
	case f.Binary || hasNUL(f):
		return true, ReasonBinary
	case f.Status == StatusDeleted:
		return true, ReasonDeleted
	case f.NewMode == ModeSymlink:
		return true, ReasonSymlink
	case f.NewMode == ModeSubmodule:
		return true, ReasonSubmodule
	case isVendored(p):
		return true, ReasonVendored
	case isLockFile(p):
		return true, ReasonLockFile
	case isGeneratedName(p):
		return true, ReasonGenerated
	case matchesAny(opts.IgnoreGlobs, p):
		return true, ReasonIgnored
	case len(f.Hunks) == 0:
		return true, ReasonNoChanges
	case hasGeneratedMarker(f):
		return true, ReasonGenerated
	}
	limit := opts.MaxFileDiffChars
	if limit == 0 {
		limit = DefaultMaxFileDiffChars
	}
	if limit > 0 && f.Size() > limit {
		return true, ReasonTooLarge
	}
	return false, ""
}

// hasNUL reports whether a line or hunk section of f holds a NUL byte:
// binary data that git took for text (or a diff written by another tool).
func hasNUL(f *File) bool {
	for i := range f.Hunks {
		if strings.IndexByte(f.Hunks[i].Section, 0) >= 0 {
			return true
		}
		for _, l := range f.Hunks[i].Lines {
			if strings.IndexByte(l.Text, 0) >= 0 {
				return true
			}
		}
	}
	return false
}

// vendorDirs are directory names whose contents are other projects' code.
var vendorDirs = map[string]bool{"vendor": true, "third_party": true, "node_modules": true}

// isVendored reports whether a directory component of p is a vendor directory.
func isVendored(p string) bool {
	dirs := strings.Split(p, "/")
	for _, d := range dirs[:len(dirs)-1] {
		if vendorDirs[d] {
			return true
		}
	}
	return false
}

// lockFiles are lock file base names that do not end in ".lock".
var lockFiles = map[string]bool{
	"go.sum":              true,
	"go.work.sum":         true,
	"package-lock.json":   true,
	"npm-shrinkwrap.json": true,
	"pnpm-lock.yaml":      true,
	"bun.lockb":           true,
	"packages.lock.json":  true,
	"gradle.lockfile":     true,
}

// isLockFile reports whether p names a dependency lock file: one of
// lockFiles or any "*.lock" (yarn.lock, Cargo.lock, Gemfile.lock,
// poetry.lock, composer.lock, Pipfile.lock, flake.lock, uv.lock, …).
func isLockFile(p string) bool {
	base := path.Base(p)
	return lockFiles[base] || (strings.HasSuffix(base, ".lock") && len(base) > len(".lock"))
}

// generatedSuffixes are base-name endings of generated files.
var generatedSuffixes = []string{
	".pb.go", ".pb.gw.go", "_gen.go", ".min.js", ".min.css",
	"_pb2.py", "_pb2_grpc.py", ".pb.h", ".pb.cc",
}

// isGeneratedName reports whether p's base name marks a generated file.
func isGeneratedName(p string) bool {
	base := path.Base(p)
	if strings.HasPrefix(base, "zz_generated") {
		return true
	}
	for _, s := range generatedSuffixes {
		if strings.HasSuffix(base, s) && len(base) > len(s) {
			return true
		}
	}
	return false
}

// markerLines is how far from the top of the new file a generator's marker
// comment is looked for; licence headers come before it.
const markerLines = 30

// hasGeneratedMarker reports whether a new-side line near the top of the file
// (added or context) is a generator's marker comment.
func hasGeneratedMarker(f *File) bool {
	for i := range f.Hunks {
		for _, l := range f.Hunks[i].Lines {
			if l.Kind == Deleted {
				continue
			}
			if l.NewNo > markerLines {
				return false
			}
			if isGeneratedMarker(l.Text) {
				return true
			}
		}
	}
	return false
}

// commentLeaders are the comment openers stripped before a marker is looked
// for.
var commentLeaders = []string{"<!--", "//", "/*", "#", "*", "--", ";", "%"}

// isGeneratedMarker reports whether line is a comment saying the file is
// generated: Go's "Code generated … DO NOT EDIT." convention, the
// "@generated" tag, or .NET's "<auto-generated>" tag.
func isGeneratedMarker(line string) bool {
	t := strings.TrimSpace(line)
	comment := false
	for trimmed := true; trimmed; {
		trimmed = false
		for _, c := range commentLeaders {
			if strings.HasPrefix(t, c) {
				t = strings.TrimSpace(t[len(c):])
				trimmed, comment = true, true
			}
		}
	}
	if !comment {
		return false
	}
	return (strings.HasPrefix(t, "Code generated ") && strings.Contains(t, "DO NOT EDIT")) ||
		strings.HasPrefix(t, "@generated") ||
		strings.HasPrefix(t, "<auto-generated")
}

// matchesAny reports whether p matches one of globs; malformed globs do not
// match.
func matchesAny(globs []string, p string) bool {
	for _, g := range globs {
		if ok, err := MatchGlob(g, p); err == nil && ok {
			return true
		}
	}
	return false
}
