package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/reviewfleet/reviewfleet/internal/redact"
)

// maxRedactBytes bounds the files redacted on disk; the expert's tools
// refuse larger files anyway and redact whatever they read.
const maxRedactBytes = 8 << 20

// RedactTree replaces the secrets in the text files under dir. The files
// named in first (the review's changed files, in path order) are redacted
// before the rest, so their markers are numbered as at submission and
// match the stored diffs and contents.
func RedactTree(ctx context.Context, dir string, first []string) error {
	// Byte order, as the submission numbers the stored contents
	// (internal/submit), whatever order the caller or the database gave.
	first = slices.Sorted(slices.Values(first))
	r := redact.New()
	done := map[string]bool{}
	for _, rel := range first {
		done[filepath.Clean(filepath.FromSlash(rel))] = true
		if err := redactFile(r, filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
			return err
		}
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		rel, _ := filepath.Rel(dir, p)
		if !d.Type().IsRegular() || done[rel] {
			return nil
		}
		return redactFile(r, p)
	})
}

// redactFile rewrites the regular text file at p with its secrets
// replaced; binary, oversized, missing and non-regular files are left.
func redactFile(r *redact.Redactor, p string) error {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxRedactBytes {
		return nil //nolint:nilerr // a changed file the tree does not hold (deleted) has nothing to redact
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("redact %s: %w", p, err)
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil
	}
	out := r.Bytes(data)
	if bytes.Equal(out, data) {
		return nil
	}
	if err := os.WriteFile(p, out, fi.Mode().Perm()); err != nil {
		return fmt.Errorf("redact %s: %w", p, err)
	}
	return nil
}
