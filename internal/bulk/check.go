package bulk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/reviewfleet/reviewfleet/internal/gitsrc"
	"github.com/reviewfleet/reviewfleet/internal/redact"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
)

// Preparer reads and parses a change into a review without storing it
// (Reviews.Prepare).
type Preparer interface {
	Prepare(ctx context.Context, req submit.Request) (review.NewReview, error)
}

// Problem is an entry whose change cannot be reviewed, and why.
type Problem struct {
	Line int
	Repo string // credentials stripped
	Base string
	Head string
	// Err says what failed and what to do about it, in terms of the
	// manifest line.
	Err string
}

// Check prepares every entry as Submit would (cloning and fetching
// through the same client, resolving base and head, reading the diff),
// concurrency at a time, and stores nothing. It returns the entries that
// could not be prepared, by line; the error is only for what stopped the
// check (ctx).
func Check(ctx context.Context, p Preparer, entries []Entry, concurrency int) ([]Problem, error) {
	if concurrency <= 0 {
		concurrency = 4
	}
	sem := make(chan struct{}, concurrency)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var out []Problem
	for _, e := range entries {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(e Entry) {
			defer func() { <-sem; wg.Done() }()
			_, err := p.Prepare(ctx, entryRequest(e, ""))
			if err == nil || ctx.Err() != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			out = append(out, Problem{Line: e.Line, Repo: submit.StripCredentials(e.Repo), Base: redact.String(e.Base), Head: redact.String(e.Head),
				Err: entryError(e, err)})
		}(e)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("check the manifest's entries: %w", err)
	}
	slices.SortFunc(out, func(a, b Problem) int { return a.Line - b.Line })
	return out, nil
}

// entryError is why an entry could not be prepared, without credentials,
// with what the author of its manifest line can do about it.
func entryError(e Entry, err error) string {
	msg := submit.StripCredentials(err.Error())
	switch {
	case e.PR != nil:
		return msg
	case errors.Is(err, gitsrc.ErrUnknownRevision):
		// Preparing names the side it could not resolve as the
		// command line would ("resolve --head: …").
		side, ref := "base", e.Base
		if strings.HasPrefix(msg, "resolve --head") {
			side, ref = "head", e.Head
		}
		return fmt.Sprintf("%s %q is no branch, tag or commit of %s: correct the line's %q (or push the branch), or remove the line (%s)",
			side, redact.String(ref), submit.StripCredentials(e.Repo), side, msg)
	}
	return msg + " — correct the line or remove it"
}
