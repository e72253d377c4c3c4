package agent

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// maxLineBytes caps one displayed line of read_file, grep and find_symbol
// output, so a minified file cannot fill a result with a single line.
const maxLineBytes = 1000

// maxDirEntries caps the entries list_dir shows.
const maxDirEntries = 300

type readFileArgs struct {
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
}

type listDirArgs struct {
	Path string `json:"path"`
}

// splitLines splits file content into lines without their line endings.
func splitLines(data []byte) []string {
	s := string(data)
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// clipLine shortens a displayed line to maxLineBytes.
func clipLine(s string) string {
	if len(s) <= maxLineBytes {
		return s
	}
	return cutUTF8(s, maxLineBytes) + " …[line clipped]"
}

// readFileTool serves read_file: numbered lines of one file, at most
// maxLines of them.
func readFileTool(ctx context.Context, sb *sandbox, a readFileArgs, maxLines int) (toolResult, error) {
	if strings.TrimSpace(a.Path) == "" {
		return toolResult{}, toolErrorf("read_file needs a path")
	}
	if a.StartLine < 0 || a.EndLine < 0 {
		return toolResult{}, toolErrorf("start_line and end_line must be positive")
	}
	if err := ctx.Err(); err != nil {
		return toolResult{}, err
	}
	data, rel, err := sb.readFile(a.Path)
	if err != nil {
		return toolResult{}, err
	}
	if isBinary(data) {
		return toolResult{}, toolErrorf("%s is a binary file", rel)
	}
	lines := splitLines(data)
	if len(lines) == 0 {
		return toolResult{text: rel + " is empty", fact: true, empty: true}, nil
	}
	start := max(a.StartLine, 1)
	if start > len(lines) {
		return toolResult{}, toolErrorf("start_line %d is past the end of %s (%d lines)", start, rel, len(lines))
	}
	end := a.EndLine
	if end == 0 || end > len(lines) {
		end = len(lines)
	}
	if end < start {
		return toolResult{}, toolErrorf("end_line %d is before start_line %d", end, start)
	}
	capped := false
	if end-start+1 > maxLines {
		end = start + maxLines - 1
		capped = true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s lines %d-%d of %d\n", rel, start, end, len(lines))
	for i := start; i <= end; i++ {
		fmt.Fprintf(&b, "%d: %s\n", i, clipLine(lines[i-1]))
	}
	if capped {
		fmt.Fprintf(&b, "[capped at %d lines: continue with start_line=%d]\n", maxLines, end+1)
	}
	return toolResult{text: b.String(), fact: true}, nil
}

// listDirTool serves list_dir: the entries of one directory, directories
// marked with a trailing slash and symlinks with a trailing @. Entries the
// sandbox denies are not shown.
func listDirTool(ctx context.Context, sb *sandbox, a listDirArgs) (toolResult, error) {
	if err := ctx.Err(); err != nil {
		return toolResult{}, err
	}
	rel, err := sb.check(a.Path)
	if err != nil {
		return toolResult{}, err
	}
	dir, err := sb.openDir(rel)
	if err != nil {
		return toolResult{}, err
	}
	defer dir.Close()
	entries, err := readDirEntries(dir)
	if err != nil {
		return toolResult{}, toolErrorf("cannot list %s", rel)
	}
	shown := entries[:0]
	for _, e := range entries {
		if !sb.deny.denied(path.Join(rel, e.Name())) {
			shown = append(shown, e)
		}
	}
	entries = shown
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d entries\n", rel, len(entries))
	for i, e := range entries {
		if i == maxDirEntries {
			fmt.Fprintf(&b, "[%d more entries not shown]\n", len(entries)-maxDirEntries)
			break
		}
		name := e.Name()
		switch t := e.Type(); {
		case t&os.ModeSymlink != 0:
			name += "@"
		case e.IsDir():
			name += "/"
			if isNoiseDir(e.Name()) {
				name += " (skipped by grep and find_symbol)"
			}
		}
		b.WriteString(name)
		b.WriteByte('\n')
	}
	return toolResult{text: b.String(), fact: true, empty: len(entries) == 0}, nil
}

// readDirEntries lists the directory dir in name order.
func readDirEntries(dir *os.Root) ([]fs.DirEntry, error) {
	f, err := dir.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return entries, nil
}
