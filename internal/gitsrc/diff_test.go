package gitsrc

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/diff"
)

func TestDiffParses(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ctx := context.Background()
	data, err := Diff(ctx, repo.dir, "main~1", "main")
	if err != nil {
		t.Fatalf("Diff: %v", err)
	}
	files, err := diff.Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, data)
	}
	type want struct {
		status diff.FileStatus
		old    string
		binary bool
		crlf   bool
		added  []int
		modes  string
	}
	wants := map[string]want{
		"src/calc.go":       {status: diff.StatusModified, old: "src/calc.go", added: []int{4}},
		"src/new.go":        {status: diff.StatusAdded, added: []int{1, 2, 3}},
		"old.txt":           {status: diff.StatusDeleted, old: "old.txt"},
		"docs/manual.md":    {status: diff.StatusRenamed, old: "docs/guide.md"},
		"run.sh":            {status: diff.StatusModified, old: "run.sh", modes: "100644>100755"},
		"logo.bin":          {status: diff.StatusModified, old: "logo.bin", binary: true},
		"sp ace/ä file.txt": {status: diff.StatusModified, old: "sp ace/ä file.txt", crlf: true, added: []int{1}},
	}
	if len(files) != len(wants) {
		t.Fatalf("got %d files, want %d:\n%s", len(files), len(wants), data)
	}
	for _, f := range files {
		w, ok := wants[f.Path()]
		if !ok {
			t.Errorf("unexpected file %q", f.Path())
			continue
		}
		if f.Status != w.status || f.OldPath != w.old || f.Binary != w.binary || f.CRLF != w.crlf {
			t.Errorf("%s: status %s old %q binary %v crlf %v, want %s %q %v %v",
				f.Path(), f.Status, f.OldPath, f.Binary, f.CRLF, w.status, w.old, w.binary, w.crlf)
		}
		if got := f.AddedLines(); len(got) != len(w.added) || (len(got) > 0 && got[len(got)-1] != w.added[len(w.added)-1]) {
			t.Errorf("%s: added lines %v, want %v", f.Path(), got, w.added)
		}
		if w.modes != "" && f.OldMode+">"+f.NewMode != w.modes {
			t.Errorf("%s: modes %s>%s, want %s", f.Path(), f.OldMode, f.NewMode, w.modes)
		}
		if !f.Binary && f.Status != diff.StatusDeleted {
			checkApplies(t, repo, f)
		}
		again, err := diff.Parse([]byte(f.Text()))
		if err != nil || len(again) != 1 || again[0].Path() != f.Path() || again[0].Status != f.Status ||
			!slices.Equal(again[0].ChangedNewLines(), f.ChangedNewLines()) {
			t.Errorf("%s: Text does not parse back to the same file (%v)", f.Path(), err)
		}
		if (len(f.Hunks) > 0 || f.Binary) && (len(f.OldHash) != 40 || len(f.NewHash) != 40) {
			t.Errorf("%s: index hashes %q..%q are not full ids", f.Path(), f.OldHash, f.NewHash)
		}
	}
}

// checkApplies applies the hunks of f to the base version of the file and
// compares the result with the head version, which checks every line number
// and text the parser produced.
func checkApplies(t *testing.T, repo testRepo, f *diff.File) {
	t.Helper()
	ctx := context.Background()
	var lines []string
	if f.Status != diff.StatusAdded {
		old, err := ReadFile(ctx, repo.dir, repo.base, f.OldPath)
		if err != nil {
			t.Fatalf("%s: read base: %v", f.Path(), err)
		}
		lines = strings.SplitAfter(string(old), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
	}
	want, err := ReadFile(ctx, repo.dir, repo.head, f.NewPath)
	if err != nil {
		t.Fatalf("%s: read head: %v", f.Path(), err)
	}
	var out []string
	pos := 0
	for _, h := range f.Hunks {
		start := h.OldStart - 1
		if h.OldCount == 0 {
			start = h.OldStart
		}
		if start < pos || start > len(lines) {
			t.Fatalf("%s: hunk at old line %d out of range", f.Path(), h.OldStart)
		}
		out = append(out, lines[pos:start]...)
		pos = start
		for _, l := range h.Lines {
			switch l.Kind {
			case diff.Context, diff.Deleted:
				if pos >= len(lines) || pos+1 != l.OldNo || strings.TrimRight(lines[pos], "\r\n") != l.Text {
					t.Fatalf("%s: old line %d %q does not match the base file", f.Path(), l.OldNo, l.Text)
				}
				if l.Kind == diff.Context {
					out = append(out, lines[pos])
				}
				pos++
			case diff.Added:
				if l.NewNo != len(out)+1 {
					t.Fatalf("%s: added line numbered %d lands on line %d", f.Path(), l.NewNo, len(out)+1)
				}
				eol := "\n"
				if f.CRLF {
					eol = "\r\n"
				}
				if l.NoNewline {
					eol = ""
				}
				out = append(out, l.Text+eol)
			}
		}
	}
	out = append(out, lines[pos:]...)
	if got := strings.Join(out, ""); got != string(want) {
		t.Errorf("%s: applying the hunks gives %q, head has %q", f.Path(), got, want)
	}
}

func TestDiffIgnoresUserConfiguration(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	for _, kv := range [][2]string{{"diff.noprefix", "true"}, {"color.diff", "always"}, {"diff.mnemonicPrefix", "true"}} {
		git(t, repo.dir, "config", kv[0], kv[1])
	}
	data, err := Diff(context.Background(), repo.dir, repo.base, repo.head)
	if err != nil {
		t.Fatalf("Diff: %v", err)
	}
	if bytes.Contains(data, []byte("\x1b[")) {
		t.Errorf("diff contains colour codes")
	}
	if !bytes.Contains(data, []byte("diff --git a/src/calc.go b/src/calc.go\n")) {
		t.Errorf("diff does not use a/ b/ prefixes:\n%s", data)
	}
}

func TestDiffUnknownRevision(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	_, err := Diff(context.Background(), repo.dir, "main", "feature/missing")
	if !errors.Is(err, ErrUnknownRevision) {
		t.Fatalf("error = %v, want ErrUnknownRevision", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "feature/missing") || !strings.Contains(msg, "head") {
		t.Errorf("error %q should name the head revision", msg)
	}
}

// A diff of commit ids is checked by git diff alone; an id that names no
// commit must still come back as an unknown revision on its side.
func TestDiffOfCommitIDs(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ctx := context.Background()
	byID, err := Diff(ctx, repo.dir, repo.base, repo.head)
	if err != nil {
		t.Fatal(err)
	}
	byName, err := Diff(ctx, repo.dir, "v1", "main")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(byID, byName) {
		t.Errorf("diff of ids differs from the diff of names:\n%s\n---\n%s", byID, byName)
	}
	tree := git(t, repo.dir, "rev-parse", "HEAD^{tree}")
	missing := strings.Repeat("e", 40)
	for _, tc := range []struct{ base, head, side string }{
		{tree, repo.head, "base"},
		{repo.base, missing, "head"},
	} {
		_, err := Diff(ctx, repo.dir, tc.base, tc.head)
		if !errors.Is(err, ErrUnknownRevision) {
			t.Errorf("Diff(%s, %s) = %v, want ErrUnknownRevision", tc.base, tc.head, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.side) {
			t.Errorf("error %q should name the %s", err, tc.side)
		}
	}
}
