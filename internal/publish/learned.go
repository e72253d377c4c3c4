package publish

import (
	"context"
	"strings"

	"github.com/google/go-github/v84/github"

	"github.com/reviewfleet/reviewfleet/internal/feedback"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/stages/report"
	"github.com/reviewfleet/reviewfleet/store"
)

// listen reads the pull request's feedback, and that of the other pull
// requests where these findings were posted (when a Syncer is set), and
// marks the findings its repository dismissed before on the same code:
// they are not posted again, and the stored report is rewritten with the
// marks. Feedback GitHub will not give now (it is away, the rate limit is
// spent) does not stop the post.
func (p *Poster) listen(ctx context.Context, pr store.PullRequest, rep *render.Report) error {
	findings := rep.Findings
	if p.Feedback != nil {
		ref := store.PullRequestRef{Repository: store.Repository{Host: pr.Host, Owner: pr.Owner, Repo: pr.Repo}, Number: pr.Number}
		fps := make([]string, 0, len(findings))
		for _, f := range findings {
			fps = append(fps, render.Fingerprint(f.Finding))
		}
		if _, err := p.Feedback.SyncBeforePost(ctx, ref, fps); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			p.log().Warn("read the pull request's feedback before posting", "pr", pr.String(), "err", err)
		}
	}
	learnings, err := p.Store.LearningsOf(ctx, store.Repository{Host: pr.Host, Owner: pr.Owner, Repo: pr.Repo})
	if err != nil {
		return err
	}
	if feedback.MarkDismissed(findings, learnings) == 0 {
		return nil
	}
	// Dismissed since the report was written: the stored report says so
	// too, so what is not posted is not silently missing.
	stored, err := report.Render(rep)
	if err != nil {
		return err
	}
	return p.Store.SaveReport(ctx, stored)
}

// recordPosts links the findings this post put on the pull request to the
// comments carrying them (listed again: creating a review does not answer
// with its comments' ids), so the feedback on each can be read.
func (p *Poster) recordPosts(ctx context.Context, gc *github.Client, pr store.PullRequest, reviewID string, ghReview int64, rep *render.Report) error {
	me, err := p.Clients.Identity(ctx, pr.Host)
	if err != nil {
		return err
	}
	comments, err := postedFingerprints(ctx, gc, pr, me)
	if err != nil {
		return err
	}
	model, version := "", rep.ToolVersion
	if r, err := p.Store.GetReview(ctx, reviewID); err == nil {
		cfg := pipeline.Settings(r)
		model = cfg.LLM.ModelFor(review.StageIntent)
		if strings.TrimSpace(cfg.Prompts.Dir) != "" {
			version += "+custom-prompts"
		}
	}
	var posts []store.FindingPost
	add := func(f render.Finding, commentID, ghReviewID int64) {
		posts = append(posts, store.FindingPost{PR: pr, ReviewID: reviewID, FindingID: f.ID, Fingerprint: render.Fingerprint(f.Finding),
			KindKey: f.KindKey, CodeHash: f.CodeHash, RiskType: string(f.RiskType), Severity: string(f.Severity), File: f.File,
			LineStart: f.LineStart, LineEnd: f.LineEnd, Claim: f.Description, Model: model, PromptVersion: version,
			GitHubReviewID: ghReviewID, CommentID: commentID})
	}
	// Every finding this review shows on the pull request: commented on
	// now or by an earlier post (an earlier push, or a post whose record
	// failed halfway), or listed in the summary. A fingerprint recorded
	// before keeps its first record.
	for _, f := range rep.Findings {
		if f.Learned != nil && f.Learned.Dismissed {
			continue
		}
		c := comments[render.Fingerprint(f.Finding)]
		review := c.reviewID
		if c.id == 0 {
			review = ghReview
		}
		add(f, c.id, review)
	}
	return p.Store.RecordFindingPosts(ctx, posts)
}

// withoutDismissed drops the findings marked dismissed, counting them.
func withoutDismissed(findings []render.Finding) ([]render.Finding, []render.Finding) {
	var keep, dismissed []render.Finding
	for _, f := range findings {
		if f.Learned != nil && f.Learned.Dismissed {
			dismissed = append(dismissed, f)
			continue
		}
		keep = append(keep, f)
	}
	return keep, dismissed
}
