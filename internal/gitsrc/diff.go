package gitsrc

import (
	"context"
	"fmt"
)

// Diff returns the unified diff from base to head (any revisions naming
// commits), as "git diff base..head" shows it, in the form internal/diff
// parses: no colour, no external diff or textconv drivers, rename detection
// on, full blob ids, a/ and b/ prefixes whatever the user's configuration
// says, and binary files reported as "Binary files … differ" markers.
func Diff(ctx context.Context, repoDir, base, head string) ([]byte, error) {
	baseSHA, err := ResolveRev(ctx, repoDir, base)
	if err != nil {
		return nil, fmt.Errorf("diff %s..%s: base: %w", base, head, err)
	}
	headSHA, err := ResolveRev(ctx, repoDir, head)
	if err != nil {
		return nil, fmt.Errorf("diff %s..%s: head: %w", base, head, err)
	}
	out, err := run(ctx, repoDir, nil,
		"-c", "core.quotePath=true",
		"diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-relative",
		"-M", "--full-index", "--src-prefix=a/", "--dst-prefix=b/",
		baseSHA, headSHA, "--")
	if err != nil {
		return nil, fmt.Errorf("diff %s..%s in %s: %w", base, head, repoDir, err)
	}
	return out, nil
}
