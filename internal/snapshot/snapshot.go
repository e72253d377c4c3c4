// Package snapshot provides the head tree of a reviewed repository as a
// directory on disk, for the expert agent's read-only tools. A local
// repository's head commit is exported once per commit and cached; a diff
// reviewed against a work tree uses the work tree; a remote URL is cloned;
// and when none of those is reachable from this worker (a fleet on other
// machines), the changed files stored with the review are written out.
package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/reviewfleet/reviewfleet/internal/gitsrc"
	"github.com/reviewfleet/reviewfleet/store"
)

// Cache materialises snapshots under Dir.
type Cache struct {
	Dir   string
	Store *store.Store

	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

func (c *Cache) lock(key string) func() {
	c.mu.Lock()
	if c.locks == nil {
		c.locks = map[string]*sync.Mutex{}
	}
	l, ok := c.locks[key]
	if !ok {
		l = &sync.Mutex{}
		c.locks[key] = l
	}
	c.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// Root returns the directory holding the review's head tree.
func (c *Cache) Root(ctx context.Context, r store.Review) (string, error) {
	switch r.Source {
	case "git", "url":
		if r.HeadSHA != "" {
			repo := r.Snapshot
			if r.Source == "url" && !gitsrc.IsRepo(ctx, repo) {
				sum := sha256.Sum256([]byte(r.Repo))
				repo = filepath.Join(c.Dir, "repos", hex.EncodeToString(sum[:8]))
				if err := c.clone(ctx, r.Repo, repo); err != nil {
					return c.fromStore(ctx, r)
				}
			}
			if gitsrc.IsRepo(ctx, repo) {
				dest := filepath.Join(c.Dir, "trees-redacted", r.HeadSHA) // trees exported before redaction are never served
				unlock := c.lock(dest)
				defer unlock()
				if _, err := os.Stat(dest); err == nil {
					return dest, nil
				}
				if err := c.export(ctx, r, repo, dest); err == nil {
					return dest, nil
				}
			}
		}
	case "diff":
		if st, err := os.Stat(r.Snapshot); err == nil && st.IsDir() {
			return r.Snapshot, nil
		}
	}
	return c.fromStore(ctx, r)
}

// export writes the head tree with its secrets redacted: into a temporary
// directory first, so a tree under dest is always a redacted one.
func (c *Cache) export(ctx context.Context, r store.Review, repo, dest string) error {
	tmp := dest + ".tmp"
	_ = os.RemoveAll(tmp)
	if err := gitsrc.Export(ctx, repo, r.HeadSHA, tmp); err != nil {
		return err
	}
	if err := c.redact(ctx, r, tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("write snapshot of %s: %w", r.ID, err)
	}
	return nil
}

// redact redacts the tree at dir, the review's changed files first.
func (c *Cache) redact(ctx context.Context, r store.Review, dir string) error {
	var first []string
	if c.Store != nil {
		files, err := c.Store.ListFiles(ctx, r.ID)
		if err != nil {
			return fmt.Errorf("list files of %s: %w", r.ID, err)
		}
		for _, f := range files {
			if f.Content != nil {
				first = append(first, f.Path)
			}
		}
	}
	return redactTree(ctx, dir, first)
}

func (c *Cache) clone(ctx context.Context, url, dir string) error {
	unlock := c.lock(dir)
	defer unlock()
	if gitsrc.IsRepo(ctx, dir) {
		return nil
	}
	return gitsrc.Clone(ctx, url, dir)
}

// fromStore writes the changed files' head contents into a directory.
func (c *Cache) fromStore(ctx context.Context, r store.Review) (string, error) {
	dest := filepath.Join(c.Dir, "reviews", r.ID)
	unlock := c.lock(dest)
	defer unlock()
	if _, err := os.Stat(dest); err == nil {
		return dest, nil
	}
	files, err := c.Store.ListFiles(ctx, r.ID)
	if err != nil {
		return "", err
	}
	tmp := dest + ".tmp"
	_ = os.RemoveAll(tmp)
	for _, f := range files {
		if f.Content == nil {
			continue
		}
		rel := filepath.Clean(filepath.FromSlash(f.Path))
		if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue // never write outside the snapshot
		}
		p := filepath.Join(tmp, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("write snapshot of %s: %w", r.ID, err)
		}
		if err := os.WriteFile(p, []byte(*f.Content), 0o644); err != nil {
			return "", fmt.Errorf("write snapshot of %s: %w", r.ID, err)
		}
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	if err := redactTree(ctx, tmp, nil); err != nil { // stored contents are redacted already: a second look costs little
		return "", fmt.Errorf("write snapshot of %s: %w", r.ID, err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		return "", fmt.Errorf("write snapshot of %s: %w", r.ID, err)
	}
	return dest, nil
}
