package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"
)

// Limits of the scan tools.
const (
	maxPatternLen = 512 // characters of a grep pattern
	maxScanHits   = 200 // lines a grep or find_symbol result lists
)

// noiseDirs are directory names the scan tools never enter: version control,
// dependencies, build output and caches.
var noiseDirs = map[string]bool{
	".git": true, "node_modules": true, "vendor": true, "dist": true, "build": true,
	"out": true, "target": true, "coverage": true, ".cache": true, ".tmp": true,
	"tmp": true, "bin": true, "obj": true, ".next": true, ".nuxt": true,
	".turbo": true, ".parcel-cache": true, ".vite": true,
}

// isNoiseDir reports whether the scan tools skip directories named name.
func isNoiseDir(name string) bool { return noiseDirs[name] }

// errStopWalk ends a walk early without an error.
var errStopWalk = errors.New("stop walk")

// walkText calls fn for every regular, non-binary text file under the root
// that the glob matches, in lexical order, skipping noise directories,
// denied and ignored paths, symlinks and files over the size limit. fn
// returns false to stop the walk. The walk stops with ctx's error when ctx
// is done.
func walkText(ctx context.Context, sb *sandbox, g *glob, ignore func(string) bool, fn func(rel string, lines []string) bool) error {
	dir, err := sb.openDir(".")
	if err != nil {
		return err
	}
	defer dir.Close()
	err = walkDir(ctx, sb, dir, ".", g, ignore, fn)
	if errors.Is(err, errStopWalk) {
		return nil
	}
	return err
}

// walkDir walks the directory dir, named rel, descending through enterDir
// so that no symlink is followed even when one appears during the walk.
func walkDir(ctx context.Context, sb *sandbox, dir *os.Root, rel string, g *glob, ignore func(string) bool, fn func(rel string, lines []string) bool) error {
	entries, err := readDirEntries(dir)
	if err != nil {
		return nil // unreadable directory: skip it
	}
	for _, e := range entries {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		child := path.Join(rel, e.Name())
		if sb.deny.denied(child) {
			continue
		}
		if e.IsDir() {
			if isNoiseDir(e.Name()) || !g.mayContain(child) {
				continue
			}
			sub, err := sb.enterDir(dir, e.Name(), child)
			if err != nil {
				continue
			}
			err = walkDir(ctx, sb, sub, child, g, ignore, fn)
			sub.Close()
			if err != nil {
				return err
			}
			continue
		}
		if !e.Type().IsRegular() || (ignore != nil && ignore(child)) || !g.match(child) {
			continue
		}
		data, rerr := sb.readIn(dir, e.Name(), child)
		if rerr != nil || isBinary(data) {
			continue
		}
		if !fn(child, splitLines(data)) {
			return errStopWalk
		}
	}
	return nil
}

type grepArgs struct {
	Pattern  string `json:"pattern"`
	PathGlob string `json:"path_glob"`
}

// hitList collects "path:line: text" lines up to maxScanHits.
type hitList struct {
	lines []string
	files map[string]bool
	more  bool
}

func (h *hitList) add(rel string, line int, text string) bool {
	if len(h.lines) == maxScanHits {
		h.more = true
		return false
	}
	if h.files == nil {
		h.files = map[string]bool{}
	}
	h.files[rel] = true
	h.lines = append(h.lines, fmt.Sprintf("%s:%d: %s", rel, line, clipLine(text)))
	return true
}

// render formats the hits under a header naming what they are; the header
// never repeats the model's arguments, so a result holds only repository
// content.
func (h *hitList) render(what string) toolResult {
	if len(h.lines) == 0 {
		return toolResult{text: "no " + what + " found", empty: true}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s in %d files", len(h.lines), what, len(h.files))
	if h.more {
		fmt.Fprintf(&b, " (stopped at %d: narrow the search)", maxScanHits)
	}
	b.WriteByte('\n')
	for _, l := range h.lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return toolResult{text: b.String(), fact: true}
}

// grepTool serves grep: lines matching an RE2 regular expression in the
// files the path_glob selects.
func grepTool(ctx context.Context, sb *sandbox, ignore func(string) bool, a grepArgs) (toolResult, error) {
	if a.Pattern == "" {
		return toolResult{}, toolErrorf("grep needs a pattern")
	}
	if len(a.Pattern) > maxPatternLen {
		return toolResult{}, toolErrorf("the pattern is longer than %d characters", maxPatternLen)
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return toolResult{}, toolErrorf("the pattern is not a valid RE2 regular expression: %v", err)
	}
	g, err := compileGlob(a.PathGlob)
	if err != nil {
		return toolResult{}, err
	}
	var hits hitList
	err = walkText(ctx, sb, g, ignore, func(rel string, lines []string) bool {
		for i, l := range lines {
			if re.MatchString(l) && !hits.add(rel, i+1, l) {
				return false
			}
		}
		return true
	})
	if err != nil {
		return toolResult{}, err
	}
	return hits.render("matching lines"), nil
}
