package gitsrc

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// Export writes the tree of rev into destDir, which must not exist yet; its
// parent is created when missing. Files keep their executable bit and
// symbolic links stay symbolic links, whatever they point at. The tree is
// extracted into a temporary sibling directory that is renamed to destDir
// only when complete, so destDir never holds a partial snapshot. Archive
// entries that would land outside the directory are refused.
func Export(ctx context.Context, repoDir, rev, destDir string) error {
	sha, err := ResolveRev(ctx, repoDir, rev)
	if err != nil {
		return fmt.Errorf("export %s: %w", rev, err)
	}
	if _, err := os.Lstat(destDir); err == nil {
		return fmt.Errorf("export %s: destination %s already exists", rev, destDir)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("export %s: check destination: %w", rev, err)
	}
	parent := filepath.Dir(destDir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("export %s: create parent directory: %w", rev, err)
	}
	tmp, err := os.MkdirTemp(parent, filepath.Base(destDir)+".tmp-")
	if err != nil {
		return fmt.Errorf("export %s: create temporary directory: %w", rev, err)
	}
	done := false
	defer func() {
		if !done {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := archiveInto(ctx, repoDir, sha, tmp); err != nil {
		return fmt.Errorf("export %s: %w", rev, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("export %s: %w", rev, err)
	}
	if err := os.Rename(tmp, destDir); err != nil {
		return fmt.Errorf("export %s: move snapshot into place: %w", rev, err)
	}
	done = true
	return nil
}

// archiveInto streams "git archive" of sha into dir.
func archiveInto(ctx context.Context, repoDir, sha, dir string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	args := []string{"archive", "--format=tar", sha}
	cmd := command(ctx, repoDir, args...)
	stderr := &limitedBuffer{limit: maxStderr}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("git archive: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git archive: %w", err)
	}
	extractErr := extractTar(ctx, tar.NewReader(stdout), dir)
	if extractErr != nil {
		cancel()
	} else {
		// Drain the end-of-archive padding so that git can exit.
		_, extractErr = io.Copy(io.Discard, stdout)
	}
	waitErr := cmd.Wait()
	if extractErr != nil {
		if waitErr != nil && ctx.Err() == nil {
			return commandError(ctx, args, stderr, waitErr)
		}
		return extractErr
	}
	if waitErr != nil {
		return commandError(ctx, args, stderr, waitErr)
	}
	return nil
}

// extractTar writes the entries of tr under dir. It goes through an os.Root
// so that no entry, even one reached through a symbolic link written
// earlier, can be created outside dir; entry names that are absolute or
// climb out with ".." are refused before that.
func extractTar(ctx context.Context, tr *tar.Reader, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer root.Close()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read archive: %w", err)
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue // git's commit id comment
		}
		name := path.Clean(hdr.Name)
		if name == "." {
			continue
		}
		if !filepath.IsLocal(filepath.FromSlash(name)) {
			return fmt.Errorf("archive entry %q: %w", hdr.Name, ErrUnsafePath)
		}
		local := filepath.FromSlash(name)
		if err := writeEntry(root, hdr, tr, local); err != nil {
			return fmt.Errorf("archive entry %q: %w", hdr.Name, err)
		}
	}
}

// writeEntry creates one archive entry under root.
func writeEntry(root *os.Root, hdr *tar.Header, r io.Reader, name string) error {
	if dir := filepath.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		return root.MkdirAll(name, 0o755)
	case tar.TypeReg:
		mode := os.FileMode(0o644)
		if hdr.Mode&0o111 != 0 {
			mode = 0o755
		}
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			_ = f.Close()
			return err
		}
		return f.Close()
	case tar.TypeSymlink:
		return root.Symlink(hdr.Linkname, name)
	default:
		return fmt.Errorf("unsupported entry type %q", hdr.Typeflag)
	}
}
