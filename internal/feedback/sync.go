package feedback

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/google/go-github/v84/github"

	"github.com/reviewfleet/reviewfleet/internal/diff"
	"github.com/reviewfleet/reviewfleet/internal/pullrequest"
	"github.com/reviewfleet/reviewfleet/internal/redact"
	"github.com/reviewfleet/reviewfleet/store"
)

// maxBodyRunes bounds the stored text of a reply.
const maxBodyRunes = 2000

// Defaults of the Syncer's bounds.
const (
	DefaultMaxPullRequests  = 50
	DefaultMinRateRemaining = 500
)

// ErrRateLow stops a sync pass: GitHub said fewer requests than
// MinRateRemaining remain. The repository's cursor keeps what was done.
var ErrRateLow = errors.New("GitHub's rate limit is nearly spent: the sync stops here and resumes on its next pass")

// Syncer reads the feedback on the findings the fleet posted: reactions
// and replies on its inline comments, and each pull request's fate. It
// only reads GitHub.
type Syncer struct {
	Store   *store.Store
	Clients *pullrequest.Clients
	// MaxPullRequests bounds the pull requests one pass reads per
	// repository (default DefaultMaxPullRequests).
	MaxPullRequests int
	// MinRateRemaining stops a pass when fewer requests remain (default
	// DefaultMinRateRemaining).
	MinRateRemaining int
	Log              *slog.Logger
}

// Stats says what a sync did.
type Stats struct {
	PullRequests int // read
	Added        int // new feedback rows
	Merged       int // pull requests found merged
	// Stopped is set when the pass stopped early (rate limit); the next
	// one resumes.
	Stopped bool
}

func (s Stats) add(o Stats) Stats {
	return Stats{PullRequests: s.PullRequests + o.PullRequests, Added: s.Added + o.Added, Merged: s.Merged + o.Merged,
		Stopped: s.Stopped || o.Stopped}
}

// SyncPR reads the feedback on the findings posted on one pull request.
// source is "webhook" or "sync" (what prompted it).
func (s *Syncer) SyncPR(ctx context.Context, pr store.PullRequestRef, source string) (Stats, error) {
	st := Stats{PullRequests: 1}
	id := store.PullRequest{Host: pr.Host, Owner: pr.Owner, Repo: pr.Repo, Number: pr.Number}
	posts, err := s.Store.PostsOf(ctx, id)
	if err != nil || len(posts) == 0 {
		return Stats{}, err
	}
	gc, _, err := s.Clients.For(ctx, pr.Host, pr.Owner, pr.Repo)
	if err != nil {
		return st, err
	}
	me, err := s.Clients.Identity(ctx, pr.Host)
	if err != nil {
		return st, err
	}
	byComment := map[int64]store.FindingPost{}
	byFingerprint := map[string]store.FindingPost{}
	for _, p := range posts {
		if p.CommentID != 0 {
			byComment[p.CommentID] = p
		}
		byFingerprint[p.Fingerprint] = p
	}
	var fb []store.Feedback
	trust := &trust{gc: gc, repo: pr.Repository, known: map[string]bool{}}
	comments, err := s.listComments(ctx, gc, id)
	if err != nil {
		return st, err
	}
	var late []store.FindingPost
	for _, c := range comments {
		if !strings.EqualFold(c.GetUser().GetLogin(), me) || c.GetInReplyTo() != 0 {
			continue
		}
		// A comment posted before its post was linked to it (or whose
		// record lost the link) is found by the fingerprint it carries.
		if p, ok := byFingerprint[FingerprintIn(c.GetBody())]; ok && p.CommentID == 0 {
			p.CommentID, p.GitHubReviewID = c.GetID(), c.GetPullRequestReviewID()
			byComment[p.CommentID] = p
			late = append(late, p)
		}
	}
	if err := s.Store.RecordFindingPosts(ctx, late); err != nil {
		return st, err
	}
	for _, c := range comments {
		p, ok := byComment[c.GetInReplyTo()]
		if !ok || c.GetInReplyTo() == 0 || strings.EqualFold(c.GetUser().GetLogin(), me) {
			continue
		}
		class := ClassifyReply(c.GetBody())
		fb = append(fb, store.Feedback{PostID: p.ID, Source: source, Kind: "reply", ExternalID: strconv.FormatInt(c.GetID(), 10),
			Author: c.GetUser().GetLogin(), Content: class, Signal: ReplySignal(class), Body: redactedBody(c.GetBody()),
			Trusted: writerAssociation(c.GetAuthorAssociation()), CreatedAt: c.GetCreatedAt().Time})
	}
	for commentID, p := range byComment {
		reactions, err := s.listReactions(ctx, gc, id, commentID)
		if err != nil {
			if errors.Is(err, ErrRateLow) {
				st.Stopped = true
				break
			}
			return st, err
		}
		for _, r := range reactions {
			if strings.EqualFold(r.GetUser().GetLogin(), me) {
				continue
			}
			signal := ReactionSignal(r.GetContent())
			trusted := false
			if signal == store.SignalDismiss { // only a dismissal teaches: only its author is looked up
				trusted = trust.writer(ctx, r.GetUser().GetLogin(), s.log())
			}
			fb = append(fb, store.Feedback{PostID: p.ID, Source: source, Kind: "reaction", ExternalID: strconv.FormatInt(r.GetID(), 10),
				Author: r.GetUser().GetLogin(), Content: r.GetContent(), Signal: signal, Trusted: trusted,
				CreatedAt: r.GetCreatedAt().Time})
		}
	}
	if !st.Stopped {
		// Thread resolution is read where GitHub offers it (GraphQL); a
		// server without it (an old Enterprise, a token without access)
		// costs the sync nothing else.
		resolved, err := resolvedThreads(ctx, gc, pr.Owner, pr.Repo, pr.Number)
		if err != nil {
			if ctx.Err() != nil {
				return st, ctx.Err()
			}
			s.log().Debug("thread resolution not read", "pr", pr.Repository.String(), "number", pr.Number, "err", err)
		}
		for commentID, by := range resolved {
			p, ok := byComment[commentID]
			if !ok {
				continue
			}
			fb = append(fb, store.Feedback{PostID: p.ID, Source: source, Kind: "thread", ExternalID: strconv.FormatInt(commentID, 10),
				Author: by, Content: "resolved", Signal: store.SignalThreadResolved, Trusted: by != "" && trust.writer(ctx, by, s.log())})
		}
		merged, mfb, err := s.fate(ctx, gc, pr, posts, source)
		if err != nil {
			return st, err
		}
		fb = append(fb, mfb...)
		if merged {
			st.Merged = 1
		}
	}
	n, err := s.Store.AddFeedback(ctx, fb)
	st.Added = n
	if err != nil {
		return st, err
	}
	if st.Stopped {
		return st, ErrRateLow
	}
	return st, nil
}

// fate records the pull request's state; once it is merged, it says for
// each posted finding whether its lines changed between the head it was
// posted on and the merged head.
func (s *Syncer) fate(ctx context.Context, gc *github.Client, pr store.PullRequestRef, posts []store.FindingPost, source string) (bool, []store.Feedback, error) {
	got, resp, err := gc.PullRequests.Get(ctx, pr.Owner, pr.Repo, pr.Number)
	if err != nil {
		return false, nil, fmt.Errorf("read pull request %s#%d: %w", pr.Repository, pr.Number, err)
	}
	if err := s.rateCheck(resp); err != nil {
		return false, nil, err
	}
	f := store.PullRequestFate{PR: pr, State: "open", HeadSHA: got.GetHead().GetSHA()}
	if got.GetState() == "closed" {
		f.State = "closed"
		if got.GetMerged() || got.MergedAt != nil {
			f.State = "merged"
		}
		if at := got.GetClosedAt(); !at.IsZero() {
			t := at.Time
			f.ClosedAt = &t
		}
	}
	if err := s.Store.SetPullRequestFate(ctx, f); err != nil {
		return false, nil, err
	}
	if f.State != "merged" || f.HeadSHA == "" {
		return false, nil, nil
	}
	// One comparison per head the findings were posted on.
	changed := map[string]map[string][]lineRange{} // head -> file -> changed old-side ranges (nil: file gone)
	var out []store.Feedback
	for _, p := range posts {
		files, ok := changed[p.PR.HeadSHA]
		if !ok {
			if p.PR.HeadSHA == f.HeadSHA {
				files = map[string][]lineRange{}
			} else if files, err = s.compare(ctx, gc, pr, p.PR.HeadSHA, f.HeadSHA); err != nil {
				s.log().Warn("compare the posted head with the merged one", "pr", pr.Repository.String(), "number", pr.Number, "err", err)
				continue
			}
			changed[p.PR.HeadSHA] = files
		}
		signal := store.SignalCodeUnchanged
		if touched(files, p.File, p.LineStart, p.LineEnd) {
			signal = store.SignalCodeChanged
		}
		out = append(out, store.Feedback{PostID: p.ID, Source: source, Kind: "merge", ExternalID: f.HeadSHA,
			Content: "merged at " + shortSHA(f.HeadSHA), Signal: signal, Trusted: true})
	}
	return true, out, nil
}

// lineRange is an old-side range a comparison changed; gone marks a
// removed or renamed file.
type lineRange struct {
	from, to int
	gone     bool
}

// compare lists, per file, the old-side lines changed from base to head.
func (s *Syncer) compare(ctx context.Context, gc *github.Client, pr store.PullRequestRef, base, head string) (map[string][]lineRange, error) {
	cmp, resp, err := gc.Repositories.CompareCommits(ctx, pr.Owner, pr.Repo, base, head, &github.ListOptions{PerPage: 100})
	if err != nil {
		return nil, fmt.Errorf("compare %s...%s of %s: %w", shortSHA(base), shortSHA(head), pr.Repository, err)
	}
	if err := s.rateCheck(resp); err != nil {
		return nil, err
	}
	out := map[string][]lineRange{}
	for _, f := range cmp.Files {
		name := f.GetFilename()
		switch {
		case f.GetStatus() == "removed":
			out[name] = append(out[name], lineRange{gone: true})
			continue
		case f.GetStatus() == "renamed" && f.GetPreviousFilename() != "":
			out[f.GetPreviousFilename()] = append(out[f.GetPreviousFilename()], lineRange{gone: true})
			continue
		case f.GetPatch() == "":
			// Binary or too large to show: treat the whole file as changed.
			out[name] = append(out[name], lineRange{gone: true})
			continue
		}
		parsed, err := diff.Parse([]byte("--- a/" + name + "\n+++ b/" + name + "\n" + f.GetPatch() + "\n"))
		if err != nil || len(parsed) != 1 {
			out[name] = append(out[name], lineRange{gone: true})
			continue
		}
		for _, h := range parsed[0].Hunks {
			prevOld := h.OldStart - 1
			for _, l := range h.Lines {
				switch l.Kind {
				case diff.Deleted:
					out[name] = append(out[name], lineRange{from: l.OldNo, to: l.OldNo})
					prevOld = l.OldNo
				case diff.Added:
					// An insertion between old lines prevOld and prevOld+1.
					out[name] = append(out[name], lineRange{from: prevOld + 1, to: prevOld})
				default:
					prevOld = l.OldNo
				}
			}
		}
	}
	return out, nil
}

// touched reports whether the changes cover any of lines start..end of
// file (an insertion strictly inside the range counts).
func touched(files map[string][]lineRange, file string, start, end int) bool {
	if start > end {
		start, end = end, start
	}
	for _, r := range files[file] {
		switch {
		case r.gone:
			return true
		case r.from <= r.to && r.from <= end && r.to >= start:
			return true
		case r.from > r.to && r.from > start && r.from <= end: // inserted before old line r.from
			return true
		}
	}
	return false
}

func (s *Syncer) listComments(ctx context.Context, gc *github.Client, id store.PullRequest) ([]*github.PullRequestComment, error) {
	opts := &github.PullRequestListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	var all []*github.PullRequestComment
	for {
		page, resp, err := gc.PullRequests.ListComments(ctx, id.Owner, id.Repo, id.Number, opts)
		if err != nil {
			return nil, fmt.Errorf("list the review comments of %s: %w", id, err)
		}
		all = append(all, page...)
		if err := s.rateCheck(resp); err != nil {
			return nil, err
		}
		if resp.NextPage == 0 {
			return all, nil
		}
		opts.Page = resp.NextPage
	}
}

func (s *Syncer) listReactions(ctx context.Context, gc *github.Client, id store.PullRequest, commentID int64) ([]*github.Reaction, error) {
	opts := &github.ListReactionOptions{ListOptions: github.ListOptions{PerPage: 100}}
	var all []*github.Reaction
	for {
		page, resp, err := gc.Reactions.ListPullRequestCommentReactions(ctx, id.Owner, id.Repo, commentID, opts)
		if err != nil {
			var ge *github.ErrorResponse
			if errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == 404 {
				return nil, nil // the comment was deleted
			}
			return nil, fmt.Errorf("list the reactions to comment %d on %s: %w", commentID, id, err)
		}
		all = append(all, page...)
		if err := s.rateCheck(resp); err != nil {
			return all, err
		}
		if resp.NextPage == 0 {
			return all, nil
		}
		opts.Page = resp.NextPage
	}
}

// rateCheck stops the pass when the answer says the hour's requests are
// nearly spent. An answer without rate headers (a fake) says nothing.
func (s *Syncer) rateCheck(resp *github.Response) error {
	if resp == nil || resp.Rate.Limit == 0 {
		return nil
	}
	floor := s.MinRateRemaining
	if floor <= 0 {
		floor = DefaultMinRateRemaining
	}
	if resp.Rate.Remaining < floor {
		return ErrRateLow
	}
	return nil
}

// SyncRepositories runs one bounded pass over the repositories filter
// matches (see store.MatchRepository): per repository, the next
// MaxPullRequests pull requests after its cursor. A repository whose pass
// stops early (rate limit) resumes there next time.
func (s *Syncer) SyncRepositories(ctx context.Context, filter string) (Stats, error) {
	repos, err := s.Store.PostedRepositories(ctx, filter)
	if err != nil {
		return Stats{}, err
	}
	limit := s.MaxPullRequests
	if limit <= 0 {
		limit = DefaultMaxPullRequests
	}
	var total Stats
	var errs []error
	for _, r := range repos {
		if ctx.Err() != nil {
			return total, ctx.Err()
		}
		st, err := s.syncRepository(ctx, r, limit)
		total = total.add(st)
		if errors.Is(err, ErrRateLow) {
			total.Stopped = true
			return total, nil
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("sync the feedback of %s: %w", r, err))
		}
	}
	return total, errors.Join(errs...)
}

func (s *Syncer) syncRepository(ctx context.Context, r store.Repository, limit int) (Stats, error) {
	items, err := s.Store.SyncBatch(ctx, r, limit)
	if err != nil {
		return Stats{}, err
	}
	var total Stats
	for _, it := range items {
		st, err := s.SyncPR(ctx, it.PR, "sync")
		total = total.add(st)
		if err != nil {
			// What was read stays; this pull request is read again on
			// the next pass, which resumes here.
			return total, err
		}
		if err := s.Store.AdvanceSyncCursor(ctx, r, it.LastPost); err != nil {
			return total, err
		}
	}
	if len(items) < limit {
		// The pass reached the repository's end: the next starts over.
		return total, s.Store.AdvanceSyncCursor(ctx, r, 0)
	}
	return total, nil
}

func (s *Syncer) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}

func redactedBody(s string) string {
	s = redact.String(s)
	if r := []rune(s); len(r) > maxBodyRunes {
		s = string(r[:maxBodyRunes]) + "…"
	}
	return s
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// MaxRelated bounds the other pull requests SyncBeforePost reads.
const MaxRelated = 5

// SyncBeforePost reads, before a post on pull request pr, its feedback and
// that of the (at most MaxRelated) other pull requests of the repository
// where any of the findings about to be posted was posted before: a
// dismissal there must be known before the finding goes up again here.
func (s *Syncer) SyncBeforePost(ctx context.Context, pr store.PullRequestRef, fingerprints []string) (Stats, error) {
	total, err := s.SyncPR(ctx, pr, "sync")
	if err != nil {
		return total, err
	}
	if len(fingerprints) == 0 {
		return total, nil
	}
	others, err := s.Store.PullRequestsPosting(ctx, pr.Repository, pr.Number, fingerprints, MaxRelated)
	if err != nil {
		return total, err
	}
	for _, o := range others {
		st, err := s.SyncPR(ctx, o, "sync")
		total = total.add(st)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
