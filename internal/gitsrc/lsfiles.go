package gitsrc

import (
	"bytes"
	"context"
	"fmt"
)

// ListFiles returns the paths of the files tracked in the index of the work
// tree at dir, slash-separated and relative to dir, in git's order.
func ListFiles(ctx context.Context, dir string) ([]string, error) {
	out, err := run(ctx, dir, nil, "ls-files", "-z", "--cached")
	if err != nil {
		return nil, fmt.Errorf("list the tracked files of %s: %w", dir, err)
	}
	var paths []string
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			paths = append(paths, string(p))
		}
	}
	return paths, nil
}
