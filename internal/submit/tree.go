package submit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/agent"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/diff"
	"github.com/reviewfleet/reviewfleet/internal/gitsrc"
	"github.com/reviewfleet/reviewfleet/internal/redact"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/snapshot"
)

// markLinks sets aside the changed files that are symlinks in the work tree
// at dir (or lie under one): a plain diff does not say so, and their
// content would be what the link points to, not the change.
func markLinks(files []review.File, dir string) {
	for i, f := range files {
		if f.SkipReason != "" {
			continue
		}
		if link, err := snapshot.IsSymlinkPath(dir, f.Path); err == nil && link {
			files[i].SkipReason, files[i].Content = diff.ReasonSymlink, nil
		}
	}
}

// checkPatched refuses a work tree that does not hold the patched code:
// every line the diff adds must stand in its file at the line the diff puts
// it, and deleted (or renamed-away) files must be gone. Otherwise findings
// would be checked against other code — with the tree at the base
// revision, every one of them would be dropped as unanchored.
func checkPatched(dir string, parsed []*diff.File, files []review.File) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("check the work tree %s: %w", dir, err)
	}
	defer root.Close()
	hint := fmt.Sprintf("--repo %s does not hold the patched code: apply the diff there (or check out its head) and try again", dir)
	reviewed := map[string]bool{}
	for _, f := range files {
		if f.SkipReason == "" {
			reviewed[f.Path] = true
		}
	}
	for _, f := range parsed {
		gone := ""
		switch {
		case f.Status == diff.StatusDeleted:
			gone = f.OldPath
		case f.Status == diff.StatusRenamed && f.OldPath != f.NewPath:
			gone = f.OldPath
		}
		if gone != "" {
			if _, err := root.Lstat(filepath.FromSlash(gone)); err == nil {
				return fmt.Errorf("%s: the diff removes this file but it is still there; %s", gone, hint)
			}
		}
		if f.Status == diff.StatusDeleted || !reviewed[utf8Safe(f.Path())] {
			continue
		}
		data, err := root.ReadFile(filepath.FromSlash(f.Path()))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%s: the diff adds or changes this file but it is missing; %s", f.Path(), hint)
			}
			return fmt.Errorf("check %s in %s: %w", f.Path(), dir, err)
		}
		lines := strings.Split(string(data), "\n")
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				if l.Kind != diff.Added {
					continue
				}
				if l.NewNo < 1 || l.NewNo > len(lines) || strings.TrimSuffix(lines[l.NewNo-1], "\r") != l.Text {
					return fmt.Errorf("%s:%d does not hold the line the diff adds there; %s", f.Path(), l.NewNo, hint)
				}
			}
		}
	}
	return nil
}

// captureTree copies the work tree's files into a snapshot that the expert
// reads instead of the live tree, so edits after submission do not change
// what is reviewed: the changed files first, then every tracked file (every
// file, outside a git repository) within the capture bounds. Paths the
// sandbox denies are not copied.
func captureTree(ctx context.Context, cfg config.Config, cacheDir, dir string, files []review.File) (string, error) {
	var changed []string
	for _, f := range files {
		if f.Change != string(diff.StatusDeleted) {
			changed = append(changed, f.Path)
		}
	}
	var rest []string
	if gitsrc.IsRepo(ctx, dir) {
		tracked, err := gitsrc.ListFiles(ctx, dir)
		if err != nil {
			return "", err
		}
		rest = tracked
	} else {
		rest = walkTree(dir, snapshot.DefaultCaptureFiles)
	}
	if cacheDir == "" {
		cacheDir = filepath.Join(os.TempDir(), "reviewfleet")
	}
	deny := cfg.Expert.SandboxDeny
	snap, _, err := snapshot.Capture(ctx, dir, filepath.Join(cacheDir, "snapshots"), changed, rest, snapshot.CaptureOptions{
		MaxFileBytes: agent.DefaultMaxFileBytes,
		// A file named by a secret is not copied: the review lists it as not
		// reviewed under its redacted path (ReasonSecretName).
		Skip: func(rel string) bool { return agent.Denied(deny, rel) || redact.String(rel) != rel },
	})
	if err != nil {
		return "", fmt.Errorf("snapshot the work tree %s: %w", dir, err)
	}
	// The copy sits in the cache on disk and is what the expert reads: its
	// secrets go, the changed files first as in the stored review.
	var stored []string // the files whose contents the review stores, numbered first there too
	for _, f := range files {
		if f.Content != nil {
			stored = append(stored, f.Path)
		}
	}
	if err := snapshot.RedactTree(ctx, snap, stored); err != nil {
		_ = os.RemoveAll(snap)
		return "", fmt.Errorf("redact the snapshot of %s: %w", dir, err)
	}
	return snap, nil
}

// walkTree lists up to limit regular files under dir, slash-separated and
// relative, without entering .git or node_modules.
func walkTree(dir string, limit int) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() && p != dir && (d.Name() == ".git" || d.Name() == "node_modules") {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if rel, err := filepath.Rel(dir, p); err == nil {
			out = append(out, filepath.ToSlash(rel))
		}
		if len(out) >= limit {
			return fs.SkipAll
		}
		return nil
	})
	return out
}
