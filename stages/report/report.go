// Package report is the last stage: it keeps the findings at or above the
// confidence threshold, renders the review as Markdown, JSON and SARIF, and
// stores all three.
package report

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/redact"
	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/source"
	"github.com/reviewfleet/reviewfleet/store"
)

// Version is written into reports as the producing tool's version.
var Version = "dev"

// Handler runs report tasks.
type Handler struct {
	Store *store.Store
}

// Work handles the report item.
func (h *Handler) Work(ctx context.Context, j pipeline.Job) error {
	p := j.Payload
	rep, err := BuildFor(ctx, h.Store, j.Review)
	if err != nil {
		return err
	}
	rep.Status = string(review.ReviewDone)
	if rep.FinishedAt.IsZero() {
		rep.FinishedAt = time.Now().UTC() // the review is done when its report is stored
	}
	stored, err := Render(rep)
	if err != nil {
		return pipeline.Permanent(err)
	}
	return h.Store.FinishReportItem(ctx, p.Item, stored)
}

// Render renders a report in every format for storage.
func Render(rep *render.Report) (store.Report, error) {
	js, err := render.JSON(rep)
	if err != nil {
		return store.Report{}, fmt.Errorf("render json report: %w", err)
	}
	sarif, err := render.SARIF(rep)
	if err != nil {
		return store.Report{}, fmt.Errorf("render sarif report: %w", err)
	}
	return store.Report{ReviewID: rep.ReviewID, Markdown: render.Markdown(rep), JSON: js, SARIF: sarif}, nil
}

// Build gathers everything known about a review into a render.Report.
func Build(ctx context.Context, st *store.Store, reviewID string) (*render.Report, error) {
	r, err := st.GetReview(ctx, reviewID)
	if err != nil {
		return nil, err
	}
	return BuildFor(ctx, st, r)
}

// BuildFor is Build for a review already loaded.
func BuildFor(ctx context.Context, st *store.Store, r review.Review) (*render.Report, error) {
	reviewID := r.ID
	cfg := pipeline.Settings(r)
	files, err := st.ListFiles(ctx, reviewID)
	if err != nil {
		return nil, err
	}
	findings, err := st.ListFindings(ctx, reviewID)
	if err != nil {
		return nil, err
	}
	verdicts, err := st.ListVerdicts(ctx, reviewID)
	if err != nil {
		return nil, err
	}
	runs, err := st.ListExpertRuns(ctx, reviewID)
	if err != nil {
		return nil, err
	}
	failed, err := st.FailedItems(ctx, reviewID)
	if err != nil {
		return nil, err
	}
	summary, err := st.EvalSummary(ctx, reviewID)
	if err != nil {
		return nil, err
	}

	rep := &render.Report{
		ToolVersion: Version, ReviewID: r.ID, Repo: redact.String(r.Repo), BaseRef: r.BaseRef, HeadRef: r.HeadRef, // a clone URL may carry a token
		BaseSHA: r.BaseSHA, HeadSHA: r.HeadSHA, Status: string(r.Status), Error: r.Error,
		IntentMode: r.IntentMode, SkippedStages: r.SkippedStages, CreatedAt: r.CreatedAt,
		Threshold:   cfg.Harness.ConfidenceThreshold,
		EvalSummary: map[review.RiskType]render.EvalCounts{},
		Usage:       render.Usage{LLMCalls: r.LLMCalls, TokensIn: int(r.TokensIn), TokensOut: int(r.TokensOut), Cost: r.Cost},
	}
	if r.FinishedAt != nil {
		rep.FinishedAt = *r.FinishedAt
	}
	if cfg.LLM.Recorded {
		rep.Notes = append(rep.Notes, "The model replies in this review were played back from a recorded exchange (offline demo); no model was called.")
	}
	if note := budgetNote(r, cfg); note != "" {
		rep.Notes = append(rep.Notes, note)
	}
	if note := SnapshotNote(r); note != "" && (r.Status != review.ReviewFailed || len(runs) > 0) {
		// Only about a run that happened: a review that failed before its
		// expert finished anything has no expert view to qualify.
		rep.Notes = append(rep.Notes, "The expert saw only the changed files, not the whole head tree: "+note+".")
	}
	content := map[string]string{}
	for _, f := range files {
		if f.SkipReason != "" {
			rep.NotReviewed = append(rep.NotReviewed, render.NotReviewed{Path: f.Path, Reason: f.SkipReason})
		}
		if f.Content != nil {
			content[f.Path] = *f.Content
		}
	}
	for _, it := range failed {
		rep.FailedItems = append(rep.FailedItems, render.FailedItem{Stage: string(it.Stage), ItemKey: it.Key, Error: it.Error})
	}
	if r.Status == review.ReviewFailed {
		// Failed or interrupted: say what never ran, so nothing below
		// reads as the result of a complete review.
		if err := unfinished(ctx, st, r, rep); err != nil {
			return nil, err
		}
		rep.Interrupted = strings.HasPrefix(r.Error, render.InterruptedPrefix)
	}
	for risk, c := range summary {
		rep.EvalSummary[risk] = render.EvalCounts{Confirmed: c.Confirmed, Disputed: c.Disputed, Uncertain: c.Uncertain}
	}
	trails := map[int64][]render.Verdict{}
	for _, v := range verdicts {
		var ev []string
		_ = json.Unmarshal(v.Evidence, &ev)
		trails[v.FindingID] = append(trails[v.FindingID], render.Verdict{
			Stage: string(v.Stage), Verdict: v.Verdict, ConfidenceBefore: v.ConfidenceBefore,
			ConfidenceAfter: v.ConfidenceAfter, Reason: v.Reason, Evidence: ev, Model: v.Model,
		})
	}
	var active []render.Finding
	for _, f := range findings {
		rf := render.Finding{Finding: f, Trail: trails[f.ID]}
		if run, ok := runs[f.ID]; ok {
			rf.Expert = expertRun(run)
		}
		if r.Status == review.ReviewFailed {
			rf.StoppedAt, rf.MissedStages = stoppedAt(rf.Trail, rep.StoppedAt, rep.StagesNotRun)
		}
		for _, l := range source.Window(content[f.File], f.LineStart, f.LineEnd, 2) {
			rf.Code = append(rf.Code, render.CodeLine{Line: l.No, Text: l.Text})
		}
		if text, ok := content[f.File]; ok && (f.Status == review.StatusActive || f.Status == review.StatusDropped) {
			if reason, out := outOfRange(text, f); out {
				// Whatever the stages concluded, a location that does not
				// exist in the head file is never reported, and that is why
				// it was dropped, even when triage named another reason
				// (far_from_change) first.
				rf.Status, rf.DropReason = review.StatusDropped, reason
			}
		}
		switch rf.Status {
		case review.StatusActive:
			active = append(active, rf)
		case review.StatusDropped, review.StatusMerged:
			// A dropped finding is listed with its location and reason; its
			// code would make a large review's report mostly excerpts of
			// what it does not report.
			rf.Code = nil
			rep.Dropped = append(rep.Dropped, rf)
		}
	}
	overrides := map[review.RiskType]float64{}
	for k, v := range cfg.Harness.ConfidenceOverrides {
		overrides[review.RiskType(k)] = v
	}
	if rep.Calibrated, err = learn(ctx, st, reviewID, cfg, active, content, overrides); err != nil {
		return nil, err
	}
	rep.Findings, rep.BelowThreshold = selectByRules(active, rep.Threshold, overrides, files)
	warns, err := st.ConfigWarnings(ctx, reviewID)
	if err != nil {
		return nil, err
	}
	for _, w := range warns {
		rep.ConfigWarnings = append(rep.ConfigWarnings, render.ConfigWarning(w))
	}
	resolved, err := st.ResolvedBy(ctx, reviewID)
	if err != nil {
		return nil, err
	}
	for _, f := range resolved {
		rep.Resolved = append(rep.Resolved, render.Finding{Finding: f})
	}
	return rep, nil
}

func expertRun(run review.ExpertRun) *render.ExpertRun {
	var tools map[string]int
	_ = json.Unmarshal(run.ToolCalls, &tools)
	total := 0
	for _, n := range tools {
		total += n
	}
	var checks []struct {
		Kind, Path, Match, Detail string
		StartLine                 int `json:"start_line"`
		EndLine                   int `json:"end_line"`
		Passed, Required          bool
	}
	_ = json.Unmarshal(run.Checks, &checks)
	var ev []string
	var failed []render.FailedCheck
	for _, c := range checks {
		if !c.Passed && c.Required {
			// What the report names when it says why the gate refused the verdict.
			failed = append(failed, render.FailedCheck{Kind: c.Kind, Path: c.Path, StartLine: c.StartLine, EndLine: c.EndLine, Match: c.Match, Detail: c.Detail})
		}
		status := "✓"
		if !c.Passed {
			status = "✗"
		}
		loc := c.Path
		if c.StartLine > 0 {
			loc += ":" + strconv.Itoa(c.StartLine) + "-" + strconv.Itoa(c.EndLine)
		}
		ev = append(ev, fmt.Sprintf("%s %s %s %q", status, c.Kind, loc, c.Match))
	}
	var outcomes map[string]map[string]int
	_ = json.Unmarshal(run.ToolOutcomes, &outcomes)
	return &render.ExpertRun{StopReason: run.StopReason, Rounds: run.Rounds, ToolCalls: total, Evidence: ev, FailedChecks: failed, Tools: outcomes}
}

// unfinished fills in what a failed or interrupted review did not run: the
// items that never finished, each with the last reason it was given back
// for, and the stages it never reached.
func unfinished(ctx context.Context, st *store.Store, r review.Review, rep *render.Report) error {
	rep.StoppedAt = string(r.Stage)
	items, err := st.UnfinishedItems(ctx, r.ID)
	if err != nil {
		return err
	}
	for _, it := range items {
		rep.NotRun = append(rep.NotRun, render.FailedItem{Stage: string(it.Stage), ItemKey: it.Key, Error: it.Error})
	}
	after := false
	for _, s := range pipeline.Chain(r.SkippedStages) {
		if after && s != review.StageDone {
			rep.StagesNotRun = append(rep.StagesNotRun, string(s))
		}
		after = after || s == r.Stage
	}
	return nil
}

// findingStages are the stages that judge a finding after intent raised it.
var findingStages = pipeline.FindingStages()

// stoppedAt names the last stage that judged a finding of a review that
// failed during stage cur, and the judging stages that never did because
// the review stopped: cur when the finding has no verdict of it, and those
// of notRun.
func stoppedAt(trail []render.Verdict, cur string, notRun []string) (string, []string) {
	last := string(review.StageIntent)
	judged := map[string]bool{}
	for _, v := range trail {
		judged[v.Stage] = true
	}
	for _, s := range findingStages {
		if judged[string(s)] {
			last = string(s)
		}
	}
	var missed []string
	for _, s := range findingStages {
		if (string(s) == cur && !judged[cur]) || slices.Contains(notRun, string(s)) {
			missed = append(missed, string(s))
		}
	}
	return last, missed
}

// inside reports whether the finding's lines exist in the file.
func inside(content string, f review.Finding) bool {
	n := len(source.Split(content))
	return f.LineStart >= 1 && f.LineEnd >= f.LineStart && f.LineEnd <= n
}

// ReasonLineOutOfRange is the drop reason of a finding whose lines are
// not in the head version of its file (past its end, or below line 1).
const ReasonLineOutOfRange = "line_out_of_range"

// outOfRange reports whether f cites lines its file does not have, with
// the drop reason that says so.
func outOfRange(content string, f review.Finding) (string, bool) {
	if inside(content, f) {
		return "", false
	}
	n := len(source.Split(content))
	return fmt.Sprintf("%s: lines %d-%d, but the head version of %s has %d lines", ReasonLineOutOfRange, f.LineStart, f.LineEnd, f.File, n), true
}

// budgetNote says how many items were skipped because the review's LLM
// budget was spent, and which setting to raise ("" when none was).
func budgetNote(r review.Review, cfg config.Config) string {
	if r.SkippedBudget == 0 {
		return ""
	}
	return fmt.Sprintf("%d items were not reviewed: the review's LLM budget was spent (%d calls of %d, %d tokens of %d). "+
		"Raise llm.max_calls_per_review or llm.max_tokens_per_review to review them.",
		r.SkippedBudget, r.LLMCalls, cfg.LLM.MaxCallsPerReview, r.TokensIn+r.TokensOut, cfg.LLM.MaxTokensPerReview)
}

// SnapshotNote says why the expert saw only the review's changed files, or
// is empty when it saw the head tree. A review of a diff alone has no work
// tree to name, and its fallback was recorded as "the work tree  is not on
// this worker" with a blank path: such a review is described as what it is.
func SnapshotNote(r review.Review) string {
	if r.SnapshotFallback == "" {
		return ""
	}
	if r.Source == review.SourceDiff && strings.TrimSpace(r.Snapshot) == "" && strings.HasPrefix(r.SnapshotFallback, "the work tree ") {
		return "the review is of a diff alone, without a work tree (review --diff … --repo DIR gives the expert the whole tree)"
	}
	return r.SnapshotFallback
}
