package submit_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/diff"
	"github.com/reviewfleet/reviewfleet/internal/hostile"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
)

// TestHostileCorpusPrepare runs every case of testdata/hostile through the
// diff parser and submission's preparation, without Postgres or Redis: each
// ends in the outcome its case.json expects, within a time limit.
func TestHostileCorpusPrepare(t *testing.T) {
	t.Parallel()
	cases, err := hostile.Load(hostile.Root())
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 40 {
		t.Fatalf("the hostile corpus has %d cases, want at least 40", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			work := t.TempDir()
			req, err := c.Materialize(ctx, work)
			if err != nil {
				t.Fatal(err)
			}
			if req.DiffFile != "" {
				checkParse(t, c, req.DiffFile)
			}
			type result struct {
				nr  review.NewReview
				err error
			}
			done := make(chan result, 1)
			go func() {
				nr, err := submit.Prepare(ctx, config.Default(), req)
				done <- result{nr, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-ctx.Done():
				t.Fatalf("%s: preparation hangs", c.About)
			}
			if err := c.CheckError(r.err); err != nil {
				t.Fatalf("%s: %v", c.About, err)
			}
			if r.err != nil {
				return
			}
			if err := c.CheckFiles(r.nr.Files); err != nil {
				t.Fatalf("%s: %v", c.About, err)
			}
		})
	}
}

// checkParse parses a case's diff file: it gives the *diff.ParseError the
// case names, or files that render and parse back to the same files.
func checkParse(t *testing.T, c hostile.Case, name string) {
	t.Helper()
	// Only regular files: a case may name a device or a pipe, which
	// must be refused, not read.
	if st, err := os.Stat(name); err != nil || !st.Mode().IsRegular() {
		return
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	files, err := diff.Parse(data)
	if c.ParseError != "" {
		var pe *diff.ParseError
		if !errors.As(err, &pe) || !strings.Contains(pe.Error(), c.ParseError) {
			t.Fatalf("%s: parse %s: want a *diff.ParseError containing %q, got %v", c.About, filepath.Base(name), c.ParseError, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: parse: %v", c.About, err)
	}
	for _, f := range files {
		again, err := diff.Parse([]byte(f.Text()))
		if err != nil || len(again) != 1 || again[0].Path() != f.Path() || len(again[0].Hunks) != len(f.Hunks) {
			t.Fatalf("%s: %q does not parse back from its rendering: %v", c.About, f.Path(), err)
		}
	}
}
