// Package publish posts a finished review on its GitHub pull request: one
// GitHub review per pull request and head commit, with a summary body and
// inline comments only on lines GitHub accepts. Posting again updates the
// earlier review instead of adding a second one, and a finding already
// commented on (same fingerprint, any earlier push) is not commented again.
package publish

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/google/go-github/v84/github"

	"github.com/reviewfleet/reviewfleet/internal/feedback"
	"github.com/reviewfleet/reviewfleet/internal/pullrequest"
	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/store"
)

// Poster posts reviews.
type Poster struct {
	Store   *store.Store
	Clients *pullrequest.Clients
	// Feedback, when set, reads the pull request's feedback before each
	// post, so a finding dismissed a moment ago is not posted again.
	Feedback *feedback.Syncer
	Log      *slog.Logger
}

// Result says what a post did.
type Result struct {
	PR             store.PullRequest
	GitHubReviewID int64
	// Updated is set when an earlier review was updated instead of created.
	Updated bool
	// Inline counts the review's inline comments on these findings, New
	// those this call added; InBody counts the findings listed in the body,
	// AlreadyPosted those an earlier review (an earlier push) commented on;
	// Dismissed those not posted because people dismissed them before.
	Inline, New, InBody, AlreadyPosted, Dismissed int
}

// Post posts review reviewID on the pull request it was submitted for.
// Writes through one GitHub installation are serialised across the fleet
// by a Postgres advisory lock.
func (p *Poster) Post(ctx context.Context, reviewID string) (Result, error) {
	pr, err := p.Store.ReviewPullRequest(ctx, reviewID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Result{}, fmt.Errorf("review %s was not submitted for a pull request (review --pr URL): nothing to post it on", reviewID)
		}
		return Result{}, err
	}
	stored, err := p.Store.GetReport(ctx, reviewID)
	if err != nil {
		return Result{}, fmt.Errorf("post review %s: it has no report yet: %w", reviewID, err)
	}
	rep, err := render.DecodeJSON(stored.JSON)
	if err != nil {
		return Result{}, fmt.Errorf("post review %s: read its report: %w", reviewID, err)
	}
	gc, lock, err := p.Clients.For(ctx, pr.Host, pr.Owner, pr.Repo)
	if err != nil {
		return Result{}, err
	}
	var res Result
	err = p.Store.WithLock(ctx, lock, func() error {
		res, err = p.post(ctx, gc, pr, reviewID, rep)
		return err
	})
	return res, err
}

func (p *Poster) post(ctx context.Context, gc *github.Client, pr store.PullRequest, reviewID string, rep *render.Report) (Result, error) {
	res := Result{PR: pr}
	current, err := pullrequest.Get(ctx, gc, pr)
	if err != nil {
		return res, err
	}
	files, err := pullrequest.Files(ctx, gc, pr)
	if err != nil {
		return res, err
	}
	me, err := p.Clients.Identity(ctx, pr.Host)
	if err != nil {
		return res, err
	}
	posted, err := postedFingerprints(ctx, gc, pr, me)
	if err != nil {
		return res, err
	}
	existing, err := p.existingReview(ctx, gc, pr, me)
	if err != nil {
		return res, err
	}
	if err := p.listen(ctx, pr, rep); err != nil {
		return res, err
	}
	findings, dismissed := withoutDismissed(rep.Findings)
	own, earlier, threads := map[string]bool{}, map[string]bool{}, map[string]string{}
	for fp, c := range posted {
		if existing != 0 && c.reviewID == existing {
			own[fp] = true
		} else {
			earlier[fp] = true
		}
		threads[fp] = c.url
	}
	note := ""
	inline := existing == 0
	if current.HeadSHA != pr.HeadSHA {
		// The files API describes the current head: its lines are not the
		// reviewed commit's.
		inline = false
		note = fmt.Sprintf("The pull request has moved on to `%s` since this review of `%s`: its findings are listed here instead of inline.", short(current.HeadSHA), short(pr.HeadSHA))
	}
	plan := MakePlan(findings, AnchorsOf(files), own, earlier, inline)
	plan.Threads, plan.Dismissed = threads, dismissed
	res.InBody, res.AlreadyPosted, res.Inline, res.Dismissed = len(plan.InBody), plan.AlreadyPosted, plan.Kept, len(dismissed)
	if existing != 0 {
		body := Summary(rep, pr.HeadSHA, plan, note)
		if _, _, err := gc.PullRequests.UpdateReview(ctx, pr.Owner, pr.Repo, pr.Number, existing, body); err != nil {
			return res, fmt.Errorf("update review %d on %s: %w", existing, pr, err)
		}
		res.GitHubReviewID, res.Updated = existing, true
		if err := p.Store.SaveGitHubPost(ctx, store.GitHubPost{PR: pr, ReviewID: reviewID, GitHubReviewID: existing, Comments: len(own)}); err != nil {
			return res, err
		}
		return res, p.recordPosts(ctx, gc, pr, reviewID, existing, rep)
	}
	id, err := create(ctx, gc, pr, Summary(rep, pr.HeadSHA, plan, note), plan.Inline)
	if isStatus(err, http.StatusUnprocessableEntity) && len(plan.Inline) > 0 {
		// GitHub refused a comment the diff seemed to allow (the diff
		// changed under us): post everything in the body rather than nothing.
		p.log().Warn("github refused the inline comments; posting them in the body", "pr", pr.String(), "err", err)
		plan = MakePlan(findings, nil, own, earlier, false)
		plan.Threads, plan.Dismissed = threads, dismissed
		res.InBody = len(plan.InBody)
		id, err = create(ctx, gc, pr, Summary(rep, pr.HeadSHA, plan, note), nil)
	}
	if err != nil {
		return res, err
	}
	res.GitHubReviewID, res.Inline, res.New = id, len(plan.Inline), len(plan.Inline)
	if err := p.Store.SaveGitHubPost(ctx, store.GitHubPost{PR: pr, ReviewID: reviewID, GitHubReviewID: id, Comments: len(plan.Inline)}); err != nil {
		return res, err
	}
	return res, p.recordPosts(ctx, gc, pr, reviewID, id, rep)
}

// isStatus reports whether err is an API answer with HTTP status code.
func isStatus(err error, code int) bool {
	var ge *github.ErrorResponse
	return errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == code
}

func (p *Poster) log() *slog.Logger {
	if p.Log == nil {
		return slog.Default()
	}
	return p.Log
}

func create(ctx context.Context, gc *github.Client, pr store.PullRequest, body string, inline []Inline) (int64, error) {
	req := &github.PullRequestReviewRequest{CommitID: github.Ptr(pr.HeadSHA), Body: github.Ptr(body), Event: github.Ptr("COMMENT")}
	for _, c := range inline {
		dc := &github.DraftReviewComment{Path: github.Ptr(c.Path), Body: github.Ptr(c.Body), Line: github.Ptr(c.Line), Side: github.Ptr("RIGHT")}
		if c.Start != c.Line {
			dc.StartLine, dc.StartSide = github.Ptr(c.Start), github.Ptr("RIGHT")
		}
		req.Comments = append(req.Comments, dc)
	}
	rv, _, err := gc.PullRequests.CreateReview(ctx, pr.Owner, pr.Repo, pr.Number, req)
	if err != nil {
		return 0, fmt.Errorf("post a review on %s: %w", pr, err)
	}
	return rv.GetID(), nil
}

// existingReview finds the review posted earlier for this head commit: the
// database's record, or a review whose body holds the marker.
func (p *Poster) existingReview(ctx context.Context, gc *github.Client, pr store.PullRequest, me string) (int64, error) {
	if post, err := p.Store.GetGitHubPost(ctx, pr); err == nil {
		_, _, err := gc.PullRequests.GetReview(ctx, pr.Owner, pr.Repo, pr.Number, post.GitHubReviewID)
		if err == nil {
			return post.GitHubReviewID, nil
		}
		if !isStatus(err, http.StatusNotFound) {
			return 0, fmt.Errorf("read review %d of %s: %w", post.GitHubReviewID, pr, err)
		}
		// Deleted on GitHub: look for another one by its marker, or post anew.
		p.log().Warn("the review posted earlier is gone", "pr", pr.String(), "github_review", post.GitHubReviewID)
	} else if !errors.Is(err, store.ErrNotFound) {
		return 0, err
	}
	return markedReview(ctx, gc, pr, me)
}

// markedReview finds the pull request's review by me whose body holds the
// marker of its head commit (0: none). Reviews by anyone else are not
// ours, whatever their body says.
func markedReview(ctx context.Context, gc *github.Client, pr store.PullRequest, me string) (int64, error) {
	marker := Marker(pr.HeadSHA)
	opts := &github.ListOptions{PerPage: 100}
	for {
		page, resp, err := gc.PullRequests.ListReviews(ctx, pr.Owner, pr.Repo, pr.Number, opts)
		if err != nil {
			return 0, fmt.Errorf("list the reviews of %s: %w", pr, err)
		}
		for _, rv := range page {
			if strings.EqualFold(rv.GetUser().GetLogin(), me) && strings.Contains(rv.GetBody(), marker) {
				return rv.GetID(), nil
			}
		}
		if resp.NextPage == 0 {
			return 0, nil
		}
		opts.Page = resp.NextPage
	}
}

// postedComment is the bot's inline comment on a finding.
type postedComment struct {
	id       int64  // the comment's id
	reviewID int64  // the GitHub review it belongs to
	url      string // its address on GitHub
}

// postedFingerprints collects the fingerprints tagged in the pull
// request's review comments by me, whichever push they were posted on,
// with the comment that carries each.
func postedFingerprints(ctx context.Context, gc *github.Client, pr store.PullRequest, me string) (map[string]postedComment, error) {
	out := map[string]postedComment{}
	opts := &github.PullRequestListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		page, resp, err := gc.PullRequests.ListComments(ctx, pr.Owner, pr.Repo, pr.Number, opts)
		if err != nil {
			return nil, fmt.Errorf("list the review comments of %s: %w", pr, err)
		}
		for _, c := range page {
			if fp := feedback.FingerprintIn(c.GetBody()); fp != "" && strings.EqualFold(c.GetUser().GetLogin(), me) && c.GetInReplyTo() == 0 {
				out[fp] = postedComment{id: c.GetID(), reviewID: c.GetPullRequestReviewID(), url: c.GetHTMLURL()}
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}
