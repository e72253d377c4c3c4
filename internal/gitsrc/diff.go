package gitsrc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
)

// Diff returns the unified diff from base to head (any revisions naming
// commits), as "git diff base..head" shows it, in the form internal/diff
// parses: no colour, no external diff or textconv drivers, rename detection
// on, full blob ids, a/ and b/ prefixes whatever the user's configuration
// says, and binary files reported as "Binary files … differ" markers.
func Diff(ctx context.Context, repoDir, base, head string) ([]byte, error) {
	// Commit ids, as a caller that resolved them passes, are checked by the
	// diff itself (id^{commit} names a commit or nothing); other revisions,
	// and ids the diff refuses, are resolved first to say which is unknown.
	if isCommitID(base) && isCommitID(head) {
		out, err := diffCommits(ctx, repoDir, base+"^{commit}", head+"^{commit}")
		if err == nil || ctx.Err() != nil {
			return out, err
		}
	}
	shas, err := ResolveRevs(ctx, repoDir, base, head)
	if err != nil {
		if ue := (*unknownRevError)(nil); errors.As(err, &ue) {
			return nil, fmt.Errorf("diff %s..%s: %s: %w", base, head, []string{"base", "head"}[ue.index], err)
		}
		return nil, fmt.Errorf("diff %s..%s: %w", base, head, err)
	}
	return diffCommits(ctx, repoDir, shas[0], shas[1])
}

// diffCommits runs Diff's git diff between two revisions git must find.
func diffCommits(ctx context.Context, repoDir, base, head string) ([]byte, error) {
	out, err := run(ctx, repoDir, nil,
		"-c", "core.quotePath=true",
		"diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-relative",
		"-M", "--full-index", "--src-prefix=a/", "--dst-prefix=b/",
		base, head, "--")
	if err != nil {
		return nil, fmt.Errorf("diff %s..%s in %s: %w", base, head, repoDir, err)
	}
	return out, nil
}

// MaxLogBytes bounds what Log returns.
const MaxLogBytes = 8 << 10

// Log returns the messages of the commits in base..head, newest first, one
// blank line between them, cut at MaxLogBytes: the change's stated purpose.
func Log(ctx context.Context, repoDir, base, head string) (string, error) {
	out, err := run(ctx, repoDir, nil, "log", "--no-color", "--format=%B%x00", "--max-count=50", base+".."+head, "--")
	if err != nil {
		return "", fmt.Errorf("log %s..%s in %s: %w", base, head, repoDir, err)
	}
	var msgs []string
	for _, m := range bytes.Split(out, []byte{0}) {
		if s := strings.TrimSpace(string(m)); s != "" {
			msgs = append(msgs, s)
		}
	}
	s := strings.Join(msgs, "\n\n")
	if len(s) > MaxLogBytes {
		s = s[:MaxLogBytes] + "\n…"
	}
	return s, nil
}
