package githubfake

import (
	"context"
	"fmt"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/diff"
	"github.com/reviewfleet/reviewfleet/internal/gitsrc"
)

// FilesFromGit computes a pull request's files and patches from the
// repository at dir, base..head, as GitHub would list them.
func FilesFromGit(ctx context.Context, dir, base, head string) ([]File, error) {
	raw, err := gitsrc.Diff(ctx, dir, base, head)
	if err != nil {
		return nil, fmt.Errorf("diff %s..%s: %w", base, head, err)
	}
	parsed, err := diff.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parse diff %s..%s: %w", base, head, err)
	}
	var out []File
	for _, f := range parsed {
		status := map[diff.FileStatus]string{diff.StatusAdded: "added", diff.StatusDeleted: "removed", diff.StatusRenamed: "renamed"}[f.Status]
		if status == "" {
			status = "modified"
		}
		out = append(out, File{Path: f.Path(), Status: status, Patch: Patch(f)})
	}
	return out, nil
}

// Patch renders a file's hunks without headers, as the API's "patch".
func Patch(f *diff.File) string {
	var b strings.Builder
	for _, h := range f.Hunks {
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@", h.OldStart, h.OldCount, h.NewStart, h.NewCount)
		if h.Section != "" {
			b.WriteString(" " + h.Section)
		}
		b.WriteString("\n")
		for _, l := range h.Lines {
			b.WriteByte(byte(l.Kind))
			b.WriteString(l.Text + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}
