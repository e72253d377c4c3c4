package gitsrc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Blob is one file read by ReadFiles.
type Blob struct {
	// Data is the file's contents; nil when Size is over the limit.
	Data []byte
	// Size is the file's size in bytes.
	Size int64
}

// lsTreeThreshold is the number of names from which ReadFiles lists the
// whole tree once instead of letting git look each path up.
const lsTreeThreshold = 64

// ReadFiles reads many files (slash-separated paths relative to the top
// level) as they are at rev, with one "git cat-file --batch" process. With
// rev == "" they are read from the work tree. Files that are absent, are
// not regular files or symbolic links (a submodule), or have an unsafe name
// are left out of the result. A file larger than maxBytes (when positive)
// comes back with its size and no data. An error means the files could not
// be read at all.
func ReadFiles(ctx context.Context, repoDir, rev string, names []string, maxBytes int64) (map[string]Blob, error) {
	out := make(map[string]Blob, len(names))
	if rev == "" {
		for _, n := range names {
			clean, err := cleanPath(n)
			if err != nil {
				continue
			}
			data, err := readWorkTree(ctx, repoDir, clean)
			if err != nil {
				if ctx.Err() != nil {
					return nil, err
				}
				continue
			}
			out[n] = blob(data, maxBytes)
		}
		return out, nil
	}
	// objects[i] is what cat-file is asked for to read names[keep[i]].
	var objects, keep []string
	// A commit id read by name is checked by the git that reads the
	// files, as its first request; any other revision is resolved first.
	sha, checked := rev, isCommitID(rev) && len(names) < lsTreeThreshold
	if checked {
		objects, keep = []string{rev + "^{commit}"}, []string{""}
	} else {
		var err error
		if sha, err = ResolveRev(ctx, repoDir, rev); err != nil {
			return nil, fmt.Errorf("read files at %s: %w", rev, err)
		}
	}
	var ids map[string]string
	if len(names) >= lsTreeThreshold {
		var err error
		if ids, err = lsTree(ctx, repoDir, sha); err != nil {
			return nil, fmt.Errorf("read files at %s: %w", rev, err)
		}
	}
	for _, n := range names {
		clean, err := cleanPath(n)
		if err != nil {
			continue
		}
		obj := sha + ":" + clean
		if ids != nil {
			id, ok := ids[clean]
			if !ok {
				continue // absent at rev, or not a blob
			}
			obj = id
		}
		objects = append(objects, obj)
		keep = append(keep, n)
	}
	if len(objects) == 0 {
		return out, nil
	}
	isCommit := false
	err := catFiles(ctx, repoDir, objects, maxBytes, func(i int, typ string, b Blob) {
		switch {
		case checked && i == 0:
			isCommit = typ == "commit"
		case typ == "blob":
			out[keep[i]] = b
		}
	})
	if err != nil {
		return nil, fmt.Errorf("read %d files at %s: %w", len(names), rev, err)
	}
	if checked && !isCommit {
		return nil, fmt.Errorf("read files at %s: resolve revision %q in %s: %w", rev, rev, repoDir, ErrUnknownRevision)
	}
	return out, nil
}

// isCommitID reports whether rev is a full object id in lower-case hex,
// as ResolveRev returns them.
func isCommitID(rev string) bool {
	if len(rev) != 40 && len(rev) != 64 {
		return false
	}
	for _, c := range rev {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func blob(data []byte, maxBytes int64) Blob {
	if maxBytes > 0 && int64(len(data)) > maxBytes {
		return Blob{Size: int64(len(data))}
	}
	return Blob{Data: data, Size: int64(len(data))}
}

// lsTree maps every blob path of the tree of sha (files and symbolic links,
// not submodules) to its object id.
func lsTree(ctx context.Context, repoDir, sha string) (map[string]string, error) {
	out, err := run(ctx, repoDir, nil, "ls-tree", "-r", "-z", "--full-tree", sha)
	if err != nil {
		return nil, err
	}
	ids := map[string]string{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		// "<mode> SP <type> SP <object> TAB <path>"
		meta, name, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) != 3 || f[1] != "blob" {
			continue
		}
		ids[string(name)] = f[2]
	}
	return ids, nil
}

// catFiles streams objects through one "git cat-file --batch" and calls fn
// with the index, type and contents of every object found (the contents
// of blobs only); missing objects are skipped.
func catFiles(ctx context.Context, repoDir string, objects []string, maxBytes int64, fn func(int, string, Blob)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	args := []string{"cat-file", "--batch"}
	cmd := command(ctx, repoDir, args...)
	stderr := &limitedBuffer{limit: maxStderr}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("git cat-file: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("git cat-file: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git cat-file: %w", err)
	}
	// Requests are written while replies are read, so that neither pipe
	// fills up and stalls the other side.
	writeErr := make(chan error, 1)
	go func() {
		w := bufio.NewWriterSize(stdin, 64<<10)
		var err error
		for _, o := range objects {
			if _, err = w.WriteString(o + "\n"); err != nil {
				break
			}
		}
		if err == nil {
			err = w.Flush()
		}
		if cerr := stdin.Close(); err == nil {
			err = cerr
		}
		writeErr <- err
	}()
	readErr := readBatch(bufio.NewReaderSize(stdout, 256<<10), len(objects), maxBytes, fn)
	if readErr != nil {
		cancel()
	} else {
		_, _ = io.Copy(io.Discard, stdout)
	}
	werr := <-writeErr
	waitErr := cmd.Wait()
	switch {
	case readErr != nil && ctx.Err() != nil && waitErr != nil:
		return commandError(ctx, args, stderr, waitErr)
	case readErr != nil:
		return readErr
	case waitErr != nil:
		return commandError(ctx, args, stderr, waitErr)
	case werr != nil:
		return fmt.Errorf("git cat-file: write requests: %w", werr)
	}
	return nil
}

// readBatch reads n replies of "git cat-file --batch".
func readBatch(r *bufio.Reader, n int, maxBytes int64, fn func(int, string, Blob)) error {
	for i := range n {
		header, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("cat-file: reply %d of %d: %w", i+1, n, err)
		}
		header = strings.TrimSuffix(header, "\n")
		// "<name> missing" (or "ambiguous") when absent — the name may hold
		// spaces — else "<id> <type> <size>".
		if strings.HasSuffix(header, " missing") || strings.HasSuffix(header, " ambiguous") {
			continue
		}
		f := strings.Fields(header)
		if len(f) != 3 {
			return fmt.Errorf("cat-file: unexpected header %q", header)
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("cat-file: bad size in header %q", header)
		}
		var data []byte
		if f[1] == "blob" && (maxBytes <= 0 || size <= maxBytes) {
			data = make([]byte, size)
			_, err = io.ReadFull(r, data)
		} else {
			_, err = r.Discard(int(size))
		}
		if err != nil {
			return fmt.Errorf("cat-file: body of %s: %w", f[0], err)
		}
		if b, err := r.ReadByte(); err != nil || b != '\n' {
			return errors.New("cat-file: reply not followed by a newline")
		}
		fn(i, f[1], Blob{Data: data, Size: size})
	}
	return nil
}
