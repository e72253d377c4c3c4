package report_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/feedback"
	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/stages/report"
	"github.com/reviewfleet/reviewfleet/store"
)

// The report applies what the repository's feedback taught, and says so:
// a finding dismissed before on the same code is kept and marked, one of
// a dismissed kind in another file loses confidence, and with
// harness.calibrate a risk type people keep dismissing needs more
// confidence, the report stating the threshold and why.
func TestBuildAppliesLearningsAndCalibration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	cfg := config.Default()
	cfg.Harness.Calibrate = true
	const content = "package a\n\nvar cache = map[string]int{}\n\nvar total = 0\n"
	const claim = "the package-level map is written without a lock"
	id, _ := stagetest.Review(t, st, cfg, review.StageReport,
		[]stagetest.File{{Path: "a.go", Content: content, Changed: []int{3, 5}}, {Path: "b.go", Content: content, Changed: []int{3, 5}}},
		[]review.Finding{
			{RiskType: review.Robustness, File: "a.go", LineStart: 3, LineEnd: 3, Description: claim, Severity: review.High, Confidence: 0.9},
			{RiskType: review.Robustness, File: "b.go", LineStart: 3, LineEnd: 3, Description: claim, Severity: review.High, Confidence: 0.9},
			{RiskType: review.Static, File: "a.go", LineStart: 5, LineEnd: 5, Description: "total is never read", Severity: review.Low, Confidence: 0.75},
		})
	repo := store.Repository{Host: "github.com", Owner: "acme", Repo: "api"}
	if err := st.SetReviewPullRequest(ctx, id, store.PullRequest{Host: repo.Host, Owner: repo.Owner, Repo: repo.Repo, Number: 9, HeadSHA: "h"}); err != nil {
		t.Fatal(err)
	}
	// On pull request 1: the same finding on a.go, dismissed; on 2..11,
	// static findings, all dismissed.
	dismissed := render.Finding{Finding: review.Finding{RiskType: review.Robustness, File: "a.go", LineStart: 3, LineEnd: 3, Description: claim}}
	feedback.Describe(&dismissed, content)
	posts := []store.FindingPost{{PR: store.PullRequest{Host: repo.Host, Owner: repo.Owner, Repo: repo.Repo, Number: 1, HeadSHA: "h0"},
		Fingerprint: render.Fingerprint(dismissed.Finding), KindKey: dismissed.KindKey, CodeHash: dismissed.CodeHash,
		RiskType: "robustness", File: "a.go", Claim: claim, CommentID: 1}}
	for n := 2; n <= 11; n++ {
		posts = append(posts, store.FindingPost{PR: store.PullRequest{Host: repo.Host, Owner: repo.Owner, Repo: repo.Repo, Number: n, HeadSHA: "h0"},
			Fingerprint: fmt.Sprint("static-", n), RiskType: "static", File: "c.go", Claim: "unused", CommentID: int64(n)})
	}
	if err := st.RecordFindingPosts(ctx, posts); err != nil {
		t.Fatal(err)
	}
	var fb []store.Feedback
	for n := 1; n <= 11; n++ {
		recorded, err := st.PostsOf(ctx, store.PullRequest{Host: repo.Host, Owner: repo.Owner, Repo: repo.Repo, Number: n})
		if err != nil || len(recorded) != 1 {
			t.Fatalf("posts of %d: %v %v", n, recorded, err)
		}
		fb = append(fb, store.Feedback{PostID: recorded[0].ID, Source: "sync", Kind: "reaction", ExternalID: "1", Author: "lead",
			Content: "-1", Signal: store.SignalDismiss, Trusted: true})
	}
	if _, err := st.AddFeedback(ctx, fb); err != nil {
		t.Fatal(err)
	}

	rep, err := report.Build(ctx, st, id)
	if err != nil {
		t.Fatal(err)
	}
	byFile := map[string]render.Finding{}
	for _, f := range rep.Findings {
		byFile[f.File+"/"+string(f.RiskType)] = f
	}
	if l := byFile["a.go/robustness"].Learned; l == nil || !l.Dismissed {
		t.Errorf("the finding dismissed before on the same code: %+v, want it reported and marked", byFile["a.go/robustness"])
	}
	if f := byFile["b.go/robustness"]; f.Learned == nil || f.Learned.Dismissed || f.Confidence >= 0.9 || !strings.Contains(f.Learned.Note, "dismissed in this repository") {
		t.Errorf("the same kind in another file: %+v %+v, want its confidence lowered, said", f.Confidence, f.Learned)
	}
	if len(rep.Calibrated) != 1 || rep.Calibrated[0].RiskType != "static" || rep.Calibrated[0].Threshold != 0.8 || !strings.Contains(rep.Calibrated[0].Reason, "10 were dismissed") {
		t.Fatalf("calibrated %+v, want static raised to 0.8 (the bound) with why", rep.Calibrated)
	}
	if len(rep.BelowThreshold) != 1 || rep.BelowThreshold[0].RiskType != review.Static {
		t.Errorf("below threshold %+v, want the static finding (0.75 under its calibrated 0.8)", rep.BelowThreshold)
	}
	stored, err := report.Render(rep)
	if err != nil || !strings.Contains(stored.Markdown, "Calibrated threshold for static") || !strings.Contains(stored.Markdown, "Learned from feedback") {
		t.Fatalf("the markdown does not state the learnings and threshold: %v", err)
	}
}
