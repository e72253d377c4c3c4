package bulk

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"

	"github.com/reviewfleet/reviewfleet/internal/keylock"
	"github.com/reviewfleet/reviewfleet/internal/redact"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/store"
)

// namespace derives batch and review IDs (UUIDv5) so that re-running the
// same submission finds what an interrupted run already stored.
var namespace = uuid.MustParse("6f1d0c55-5c8e-4b7a-9d4e-2b7f0a3c9e11")

// NoCap is the MaxRunning of a batch whose running reviews are not capped,
// whatever bulk.max_running_per_batch says (admission treats any cap at or
// below zero as none, and 0 stands for the configured default).
const NoCap = -1

// Spec is a batch to submit.
type Spec struct {
	// ID is the batch ID. Empty: derived from Source and the entries, so
	// the same command on the same entries resumes the same batch.
	ID      string
	Name    string
	Source  string // "manifest:PATH", "github:ORG", "schedule:NAME"
	Labels  map[string]string
	Entries []Entry
	// MaxRunning caps this batch's running reviews (0:
	// bulk.max_running_per_batch; NoCap: none).
	MaxRunning int
}

// DeriveID is the batch ID of a source and its entries.
func DeriveID(source string, entries []Entry) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", source)
	enc := json.NewEncoder(h)
	for _, e := range entries {
		_ = enc.Encode(struct {
			Line int
			E    Entry
		}{e.Line, e})
	}
	return uuid.NewSHA1(namespace, h.Sum(nil)).String()
}

// Result says what a submission did.
type Result struct {
	Batch      store.Batch
	New        int // reviews created by this run
	Resumed    int // entries an earlier run had already submitted
	Duplicates int // entries linked to an identical review
	Errors     int // entries that could not be submitted
}

// Reviews prepares a change into a review and stores it; the fleet's
// wiring (internal/app) provides it.
type Reviews interface {
	// Prepare reads and parses a change into a queued review with its
	// dedupe key.
	Prepare(ctx context.Context, req submit.Request) (review.NewReview, error)
	// Create stores a prepared review and admits what the fleet has room
	// for.
	Create(ctx context.Context, nr review.NewReview) (string, error)
}

// Submitter submits batches: it records them in Store and their reviews
// through Reviews.
type Submitter struct {
	Store   *store.Store
	Reviews Reviews
	// Concurrency is how many entries are prepared at once (default 4).
	Concurrency int
	// OnEntry, when set, is called after each entry (for progress).
	OnEntry func(e store.BatchEntry)

	locks keylock.Locks // serialise entries with one dedupe key
}

// Submit stores the batch and one review per entry, in parallel up to
// Concurrency. Entries an earlier run of the same batch submitted are
// skipped; an entry identical to an earlier review (same dedupe key, see
// Reviews.Prepare) is linked to it instead of being reviewed again. An entry
// that cannot be prepared (a ref that does not resolve) is recorded with
// its error and the others go on. A cancelled batch submits nothing more.
func (s *Submitter) Submit(ctx context.Context, spec Spec) (Result, error) {
	if spec.ID == "" {
		spec.ID = DeriveID(spec.Source, spec.Entries)
	}
	batch, err := s.Store.CreateBatch(ctx, store.Batch{
		ID: spec.ID, Name: spec.Name, Source: spec.Source, Labels: spec.Labels,
		MaxRunning: spec.MaxRunning, Entries: len(spec.Entries),
	})
	if err != nil {
		return Result{}, err
	}
	res := Result{Batch: batch}
	if batch.Status == store.BatchCancelled {
		return res, fmt.Errorf("batch %s was cancelled", batch.ID)
	}
	done, err := s.Store.BatchEntries(ctx, batch.ID)
	if err != nil {
		return res, err
	}
	// Entries are matched to an earlier run's by what they review, not by
	// position: a listing taken again (a GitHub org whose pull requests
	// changed in between) may order them differently. An entry new to this
	// run gets a line after the earlier run's, so rows never collide.
	submitted := map[string]bool{}
	lines := map[string]int{}
	last := 0
	seen := map[string]int{}
	for _, e := range done {
		k := identity(e.Repo, e.BaseRef, e.HeadRef, seen)
		lines[k] = e.Line
		if e.ReviewID != "" {
			submitted[k] = true
		}
		last = max(last, e.Line)
	}
	clear(seen)
	for i, e := range spec.Entries {
		k := identity(submit.StripCredentials(e.Repo), redact.String(e.Base), redact.String(e.Head), seen) // as stored
		if l, ok := lines[k]; ok {
			spec.Entries[i].Line = l
		} else if len(done) > 0 {
			last++
			spec.Entries[i].Line = last
		}
		spec.Entries[i].key = k
	}
	n := s.Concurrency
	if n <= 0 {
		n = 4
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, e := range spec.Entries {
		if submitted[e.key] {
			res.Resumed++
			continue
		}
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(e Entry) {
			defer func() { <-sem; wg.Done() }()
			be, created, err := s.submitEntry(ctx, batch.ID, e)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, err)
			case be.Error != "":
				res.Errors++
			case be.Duplicate:
				res.Duplicates++
			case created:
				res.New++
			default:
				res.Resumed++
			}
			if err == nil && s.OnEntry != nil {
				s.OnEntry(be)
			}
		}(e)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("submit batch %s (re-run the same command to resume): %w", batch.ID, err)
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("submit batch %s interrupted (re-run the same command to resume): %w", batch.ID, err)
	}
	if err := s.Store.FinishBatchSubmission(ctx, batch.ID); err != nil {
		return res, err
	}
	res.Batch, err = s.Store.GetBatch(ctx, batch.ID)
	return res, err
}

// submitEntry submits one entry and records it. It reports whether it
// created a new review. An error is returned only for what stops the
// batch (the database); an entry's own problem is recorded in its row.
func (s *Submitter) submitEntry(ctx context.Context, batchID string, e Entry) (be store.BatchEntry, created bool, err error) {
	// Each review of the batch is a trace of its own.
	ctx, span := submit.StartBatchSpan(ctx, batchID)
	defer func() {
		id := ""
		if created {
			id = be.ReviewID
		}
		submit.EndSpan(span, id, err)
	}()
	be = store.BatchEntry{
		// Refs are stored redacted, as the review stores them: a branch
		// may be named after a token.
		Line: e.Line, Repo: submit.StripCredentials(e.Repo), BaseRef: redact.String(e.Base), HeadRef: redact.String(e.Head), Labels: e.Labels,
	}
	if b, err := s.Store.GetBatch(ctx, batchID); err != nil {
		return be, false, err
	} else if b.Status == store.BatchCancelled {
		return be, false, fmt.Errorf("batch %s was cancelled", batchID)
	}
	if e.key == "" {
		e.key = identity(be.Repo, e.Base, e.Head, map[string]int{})
	}
	id := uuid.NewSHA1(uuid.MustParse(batchID), []byte("entry "+e.key)).String()
	if _, err := s.Store.GetReview(ctx, id); err == nil {
		// Created by an interrupted run that did not get to record it.
		be.ReviewID = id
		return be, false, s.Store.SaveBatchEntry(ctx, batchID, be)
	} else if !errors.Is(err, store.ErrNotFound) {
		return be, false, err
	}
	nr, err := s.Reviews.Prepare(ctx, entryRequest(e, batchID))
	if err != nil {
		if ctx.Err() != nil {
			return be, false, ctx.Err()
		}
		be.Error = entryError(e, err)
		return be, false, s.Store.SaveBatchEntry(ctx, batchID, be)
	}
	nr.ID, nr.Kind = id, review.KindBulk
	nr.Repo = submit.StripCredentials(nr.Repo)
	be.DedupeKey = nr.DedupeKey

	// Two identical entries submitted at once must not both miss each other.
	unlock := s.locks.Lock(nr.DedupeKey)
	defer unlock()
	dup, err := s.Store.FindDuplicate(ctx, nr.DedupeKey, batchID)
	if err != nil {
		return be, false, err
	}
	if dup != "" {
		be.ReviewID, be.Duplicate = dup, true
		return be, false, s.Store.SaveBatchEntry(ctx, batchID, be)
	}
	if _, err := s.Reviews.Create(ctx, nr); err != nil {
		return be, false, err
	}
	if e.PR != nil {
		pr := *e.PR
		pr.HeadSHA = nr.HeadSHA
		if err := s.Store.SetReviewPullRequest(ctx, id, pr); err != nil {
			return be, false, err
		}
	}
	be.ReviewID = id
	return be, true, s.Store.SaveBatchEntry(ctx, batchID, be)
}

// entryRequest is the change an entry asks to review.
func entryRequest(e Entry, batchID string) submit.Request {
	req := submit.Request{Repo: e.Repo, Base: e.Base, Head: e.Head, HeadRepo: e.HeadRepo, Purpose: e.Purpose, BatchID: batchID,
		Origin: submit.FromManifest}
	if e.PR != nil {
		req.ChangeKey, req.Origin = e.PR.ChangeKey(), submit.FromPullRequest
	}
	return req
}

// identity names what an entry reviews (repository without credentials,
// base and head) and which occurrence of it in the batch it is, so that a
// resumed submission recognises it wherever it now stands.
func identity(repo, base, head string, seen map[string]int) string {
	k := repo + "\x00" + base + "\x00" + head
	seen[k]++
	return fmt.Sprintf("%s\x00%d", k, seen[k])
}
