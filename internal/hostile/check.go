package hostile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// CheckError compares the error of submitting the case with the outcome
// expected: nil for ExpectDone, an error carrying every Contains string for
// ExpectError.
func (c Case) CheckError(err error) error {
	switch {
	case c.Expect == ExpectDone && err != nil:
		return fmt.Errorf("want the change accepted, got error: %v", err)
	case c.Expect == ExpectError && err == nil:
		return errors.New("want an error, the change was accepted")
	case err == nil:
		return nil
	}
	for _, s := range c.Contains {
		if !strings.Contains(err.Error(), s) {
			return fmt.Errorf("error %q does not contain %q", err, s)
		}
	}
	return nil
}

// CheckFiles compares the files of an accepted review with Skipped and
// Reviewed.
func (c Case) CheckFiles(files []review.File) error {
	byPath := map[string]review.File{}
	var all []string
	for _, f := range files {
		byPath[f.Path] = f
		all = append(all, fmt.Sprintf("%q(%s)", f.Path, f.SkipReason))
	}
	for p, reason := range c.Skipped {
		f, ok := byPath[p]
		switch {
		case !ok:
			return fmt.Errorf("no file %q; files: %s", p, strings.Join(all, " "))
		case f.SkipReason != reason:
			return fmt.Errorf("file %q skipped as %q, want %q", p, f.SkipReason, reason)
		}
	}
	for _, p := range c.Reviewed {
		f, ok := byPath[p]
		switch {
		case !ok:
			return fmt.Errorf("no file %q; files: %s", p, strings.Join(all, " "))
		case f.SkipReason != "":
			return fmt.Errorf("file %q skipped as %q, want it reviewed", p, f.SkipReason)
		}
	}
	return nil
}
