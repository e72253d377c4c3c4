package gitsrc

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Export writes the tree of rev into destDir, which must not exist yet; its
// parent is created when missing. Files keep their executable bit and
// symbolic links stay symbolic links, whatever they point at. The tree is
// extracted into a temporary sibling directory that is renamed to destDir
// only when complete, so destDir never holds a partial snapshot. Archive
// entries that would land outside the directory are refused.
func Export(ctx context.Context, repoDir, rev, destDir string) error {
	// A commit id is checked by the listing of its tree (id^{commit} names
	// a commit or nothing); any other revision is resolved first.
	sha := rev
	if !isCommitID(rev) {
		var err error
		if sha, err = ResolveRev(ctx, repoDir, rev); err != nil {
			return fmt.Errorf("export %s: %w", rev, err)
		}
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
	if err := exportInto(ctx, repoDir, sha, tmp); err != nil {
		if sha == rev && ctx.Err() == nil {
			// Say so when the id names no commit here.
			if _, rerr := ResolveRev(ctx, repoDir, rev); rerr != nil {
				return fmt.Errorf("export %s: %w", rev, rerr)
			}
		}
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

// exportInto writes the tree of commit sha into dir from the objects as stored:
// "git ls-tree" lists it and one "git cat-file --batch" reads the blobs.
// Unlike "git archive", nothing converts the contents on the way out, so
// no filter driver, ident or export-subst of the repository's attributes
// runs or changes a file.
func exportInto(ctx context.Context, repoDir, sha, dir string) error {
	out, err := run(ctx, repoDir, nil, "ls-tree", "-r", "-t", "-z", "--full-tree", sha+"^{commit}")
	if err != nil {
		return fmt.Errorf("list the tree of %s: %w", sha, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer root.Close()
	type entry struct {
		hdr  *tar.Header
		name string
	}
	var blobs []entry
	var ids []string
	for _, rec := range bytes.Split(out, []byte{0}) {
		// "<mode> SP <type> SP <object> TAB <path>"
		meta, rawName, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) != 3 {
			continue
		}
		name := path.Clean(string(rawName))
		if name == "." || !filepath.IsLocal(filepath.FromSlash(name)) {
			return fmt.Errorf("tree entry %q: %w", rawName, ErrUnsafePath)
		}
		local := filepath.FromSlash(name)
		switch {
		case f[1] == "tree" || f[1] == "commit": // a submodule is an empty directory
			if err := writeEntry(root, &tar.Header{Typeflag: tar.TypeDir}, nil, local); err != nil {
				return fmt.Errorf("tree entry %q: %w", name, err)
			}
		case f[1] == "blob" && f[0] == "120000":
			blobs = append(blobs, entry{&tar.Header{Typeflag: tar.TypeSymlink}, local})
			ids = append(ids, f[2])
		case f[1] == "blob":
			mode := int64(0o644)
			if f[0] == "100755" {
				mode = 0o755
			}
			blobs = append(blobs, entry{&tar.Header{Typeflag: tar.TypeReg, Mode: mode}, local})
			ids = append(ids, f[2])
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var writeErr error
	found := 0
	err = catFiles(ctx, repoDir, ids, 0, func(i int, typ string, b Blob) {
		if typ != "blob" {
			return
		}
		found++
		if writeErr != nil {
			return
		}
		e := blobs[i]
		if e.hdr.Typeflag == tar.TypeSymlink {
			e.hdr.Linkname = string(b.Data)
		}
		if err := writeEntry(root, e.hdr, bytes.NewReader(b.Data), e.name); err != nil {
			writeErr = fmt.Errorf("tree entry %q: %w", filepath.ToSlash(e.name), err)
		}
	})
	switch {
	case err != nil:
		return err
	case writeErr != nil:
		return writeErr
	case found != len(ids):
		return fmt.Errorf("%d of the %d files of %s are missing from the repository", len(ids)-found, len(ids), sha)
	}
	return nil
}

// writeEntry creates one tree entry, described as a tar header, under
// root. Going through an os.Root, no entry, even one reached through a
// symbolic link written earlier, can be created outside it.
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
