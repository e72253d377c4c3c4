package snapshot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/reviewfleet/reviewfleet/internal/redact"
)

// maxRedactBytes bounds the files redacted on disk. Larger files are
// removed from the copy: the expert's tools refuse them anyway, and a file
// left unredacted would keep its secrets in the cache.
const maxRedactBytes = 8 << 20

// secretName reports whether a slash-separated relative path holds a
// secret (keys/ghp_….txt, a directory named after a token). Such files are
// removed from the copy, not renamed: the review lists them as not
// reviewed under their redacted name (internal/submit), so no stage looks
// for them in the snapshot, and a file named by its marker would let the
// expert's tools find a path the diff never showed.
func secretName(rel string) bool { return redact.String(rel) != rel }

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
		if secretName(rel) {
			continue // removed by the walk
		}
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
		if rel != "." && secretName(filepath.ToSlash(rel)) {
			if err := os.RemoveAll(p); err != nil {
				return fmt.Errorf("remove %s: %w", p, err)
			}
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || done[rel] {
			return nil
		}
		return redactFile(r, p)
	})
}

// redactContent redacts a file's content (a variable, so that tests can
// count the files that reach the redactor).
var redactContent = func(r *redact.Redactor, data []byte) []byte { return r.Bytes(data) }

// redactFile rewrites the regular file at p with its secrets replaced;
// an oversized one is removed, missing and non-regular files are left.
// Content this process found clean before (cleanFiles) is not redacted
// again.
// Binary files are redacted as text: a marker in place of a token spoils
// the binary, which no stage reads, and keeps the token out of the cache.
func redactFile(r *redact.Redactor, p string) error {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return nil //nolint:nilerr // a changed file the tree does not hold (deleted) has nothing to redact
	}
	if fi.Size() > maxRedactBytes {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("remove oversized %s: %w", p, err)
		}
		return nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("redact %s: %w", p, err)
	}
	key := sha256.Sum256(data)
	if cleanFiles.has(key) {
		return nil
	}
	found := r.Found()
	out := redactContent(r, data)
	if bytes.Equal(out, data) {
		if r.Found() == found {
			cleanFiles.add(key)
		}
		return nil
	}
	if err := os.WriteFile(p, out, fi.Mode().Perm()); err != nil {
		return fmt.Errorf("redact %s: %w", p, err)
	}
	return nil
}
