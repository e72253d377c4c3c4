package gitsrc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// ReadFile returns the contents of the file at path (slash-separated,
// relative to the repository's top level) as it is at rev. With rev == ""
// it reads the file from the work tree instead, refusing to follow symbolic
// links out of repoDir. An absent file gives an error wrapping ErrNotExist;
// a path that is absolute or climbs out with ".." one wrapping
// ErrUnsafePath. At a revision, a symbolic link reads as its target path,
// the way git stores it.
func ReadFile(ctx context.Context, repoDir, rev, name string) ([]byte, error) {
	clean, err := cleanPath(name)
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", name, err)
	}
	if rev == "" {
		return readWorkTree(ctx, repoDir, clean)
	}
	sha, err := ResolveRev(ctx, repoDir, rev)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", clean, rev, err)
	}
	data, err := catFile(ctx, repoDir, sha+":"+clean)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", clean, rev, err)
	}
	return data, nil
}

// cleanPath checks that name stays inside its root and returns it cleaned.
func cleanPath(name string) (string, error) {
	if name == "" || strings.ContainsAny(name, "\x00\n") {
		return "", ErrUnsafePath
	}
	clean := path.Clean(name)
	if !filepath.IsLocal(filepath.FromSlash(clean)) || clean == "." {
		return "", ErrUnsafePath
	}
	return clean, nil
}

// readWorkTree reads name from the work tree at repoDir through an os.Root,
// which refuses symbolic links and ".." that lead outside it.
func readWorkTree(ctx context.Context, repoDir, name string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	root, err := os.OpenRoot(repoDir)
	if err != nil {
		return nil, fmt.Errorf("read %s: open repository %s: %w", name, repoDir, err)
	}
	defer root.Close()
	data, err := root.ReadFile(filepath.FromSlash(name))
	if err != nil {
		return nil, fmt.Errorf("read %s in the work tree of %s: %w", name, repoDir, err)
	}
	return data, nil
}

// catFile reads one object by name ("<commit>:<path>") through
// "git cat-file --batch", which reports a missing object on standard output
// instead of failing, so that absence is told apart from other errors.
func catFile(ctx context.Context, repoDir, object string) ([]byte, error) {
	out, err := run(ctx, repoDir, []byte(object+"\n"), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	header, body, ok := bytes.Cut(out, []byte("\n"))
	if !ok {
		return nil, fmt.Errorf("cat-file: truncated output %q", out)
	}
	// "<name> missing" when absent (the name may contain spaces), else
	// "<id> <type> <size>".
	if bytes.HasSuffix(header, []byte(" missing")) {
		return nil, ErrNotExist
	}
	fields := strings.Fields(string(header))
	if len(fields) != 3 {
		return nil, fmt.Errorf("cat-file: unexpected header %q", header)
	}
	if fields[1] != "blob" {
		return nil, fmt.Errorf("is a %s, not a file", fields[1])
	}
	size, err := strconv.Atoi(fields[2])
	if err != nil || size < 0 || size > len(body) {
		return nil, fmt.Errorf("cat-file: bad size in header %q", header)
	}
	return body[:size], nil
}
