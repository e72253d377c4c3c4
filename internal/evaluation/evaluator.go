package evaluation

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/store"
)

// Reviewed is one case's review as it ended.
type Reviewed struct {
	ID     string
	Report *render.Report
	// Incomplete says some items could not be reviewed (FailedItems of
	// them); the findings count as they are.
	Incomplete  bool
	FailedItems int
}

// Change is the change a case asks to review: a repository and two
// revisions, or a diff file whose contents are read from Repo.
type Change struct {
	Repo, Base, Head, DiffFile, Purpose string
}

// Reviewer reviews one case's change with the harness settings h, the way
// `reviewfleet review` does. On error, the Reviewed it returns names the
// review when one was submitted.
type Reviewer func(ctx context.Context, ch Change, h config.Harness) (Reviewed, error)

// RunStore keeps evaluation runs; *store.Store provides it.
type RunStore interface {
	SaveEvalRun(ctx context.Context, r store.EvalRun) error
}

// Evaluator runs a dataset through the review path and scores it.
type Evaluator struct {
	Review Reviewer
	Runs   RunStore
	// LLM and Cost serve the judge when JudgeModel is set.
	LLM        Structurer
	Cost       func(model string, tokensIn, tokensOut int) float64
	JudgeModel string
	// Window is how many lines a finding and a golden issue may be apart
	// and still match.
	Window   int
	Dataset  string
	Label    string
	Progress io.Writer // nil: no progress
	Parallel int       // cases under review at once (1 without a fleet)
}

// HarnessToggles maps the names of ablation toggles to the harness
// settings they flip.
var HarnessToggles = map[string]func(*config.Harness) *bool{
	"verify":              func(h *config.Harness) *bool { return &h.VerifyEnabled },
	"eval":                func(h *config.Harness) *bool { return &h.EvalEnabled },
	"progressive_context": func(h *config.Harness) *bool { return &h.ProgressiveContextEnabled },
}

// ParseToggles reads a comma-separated list of ablation toggles.
func ParseToggles(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if _, ok := HarnessToggles[t]; !ok {
			return nil, fmt.Errorf("--toggles: unknown toggle %q (verify, eval or progressive_context)", t)
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// Outcome is an evaluation: the run with every setting as asked, one run
// per ablated toggle, and the comparison with a baseline when one was
// given.
type Outcome struct {
	Run
	Compare  *Comparison   `json:"compare,omitempty"`
	Ablation []AblationRun `json:"ablation,omitempty"`
}

// AblationRun is the run with one toggle off and how it differs from the
// run with every toggle on.
type AblationRun struct {
	Toggle string `json:"toggle"`
	Run    Run    `json:"run"`
	Delta  Delta  `json:"delta"`
}

// Evaluate reviews every case with the harness settings base, the toggles
// of ablate all on, then again once per toggle with that toggle off; it
// compares the first run with baseline when one is given. Every run is
// stored.
func (e *Evaluator) Evaluate(ctx context.Context, cases []Case, base config.Harness, ablate []string, baseline *Baseline) (Outcome, error) {
	for _, t := range ablate {
		*HarnessToggles[t](&base) = true
	}
	allOn, err := e.Run(ctx, cases, base, labelFor(e.Label, ablate, ""))
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Run: allOn}
	for _, t := range ablate {
		h := base
		*HarnessToggles[t](&h) = false
		off, err := e.Run(ctx, cases, h, labelFor(e.Label, ablate, t))
		if err != nil {
			return out, err
		}
		out.Ablation = append(out.Ablation, AblationRun{Toggle: t, Run: off, Delta: Diff(t, allOn, off)})
	}
	if baseline != nil {
		c := Compare(allOn.Totals, *baseline)
		out.Compare = &c
	}
	return out, nil
}

func labelFor(label string, ablate []string, off string) string {
	if len(ablate) == 0 {
		return label
	}
	l := "all on"
	if off != "" {
		l = off + " off"
	}
	if label != "" {
		l = label + ": " + l
	}
	return l
}

// Run reviews every case with the harness settings h, scores the cases,
// stores the run and returns it.
func (e *Evaluator) Run(ctx context.Context, cases []Case, h config.Harness, label string) (Run, error) {
	r := Run{
		ID: uuid.NewString(), Dataset: e.Dataset, Label: label, JudgeModel: e.JudgeModel, Window: e.Window,
		Harness:  map[string]bool{"verify": h.VerifyEnabled, "eval": h.EvalEnabled, "progressive_context": h.ProgressiveContextEnabled},
		Parallel: max(1, e.Parallel),
	}
	var judge *LLMJudge
	reviewOf := &caseReviews{ids: map[string]string{}}
	if e.JudgeModel != "" {
		judge = &LLMJudge{LLM: e.LLM, Model: e.JudgeModel, ReviewID: reviewOf.get, Cost: e.Cost}
	}
	// Results keep the dataset's order whatever order the cases end in.
	results := make([]CaseResult, len(cases))
	slots := make(chan struct{}, max(1, e.Parallel))
	var wg sync.WaitGroup
	for i, c := range cases {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			fmt.Fprintf(e.progress(), "eval %s: case %d/%d %s\n", orAll(label), i+1, len(cases), c.Name)
			results[i] = e.evalCase(ctx, c, h, judge, reviewOf)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	r.Cases = results
	r.Sum()
	if err := e.Runs.SaveEvalRun(ctx, storedRun(r)); err != nil {
		return r, err
	}
	return r, nil
}

func (e *Evaluator) progress() io.Writer {
	if e.Progress == nil {
		return io.Discard
	}
	return e.Progress
}

// StoredParallel reads the parallelism stored with a run's settings; a
// run stored without one counts as one case at a time.
func StoredParallel(settings []byte) int {
	var v struct {
		Parallel int `json:"parallel"`
	}
	if json.Unmarshal(settings, &v) != nil || v.Parallel < 1 {
		return 1
	}
	return v.Parallel
}

// caseReviews maps a case to its review, for the judge's calls to be
// recorded with it; cases under review at once write it concurrently.
type caseReviews struct {
	mu  sync.Mutex
	ids map[string]string
}

func (m *caseReviews) set(name, id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids[name] = id
}

func (m *caseReviews) get(c Case) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ids[c.Name]
}

func orAll(label string) string {
	if label == "" {
		return "run"
	}
	return label
}

// evalCase reviews one case and matches its reported findings.
func (e *Evaluator) evalCase(ctx context.Context, c Case, h config.Harness, judge *LLMJudge, reviewOf *caseReviews) CaseResult {
	start := time.Now()
	rv, err := e.Review(ctx, CaseChange(c), h)
	runtime := time.Since(start)
	id := rv.ID
	if err != nil {
		res := Failed(c, err, runtime, Usage{})
		res.ReviewID = id
		return res
	}
	if rv.Incomplete {
		fmt.Fprintf(e.progress(), "eval: review %s is incomplete (%d items could not be reviewed); its findings count as they are\n", id, rv.FailedItems)
	}
	rep := rv.Report
	usage := Usage{LLMCalls: rep.Usage.LLMCalls, TokensIn: int64(rep.Usage.TokensIn), TokensOut: int64(rep.Usage.TokensOut), Cost: rep.Usage.Cost}
	findings := ReportedFindings(rep)
	m := MatchWindow(findings, c.Golden, e.Window)
	var jerr error
	if judge != nil {
		reviewOf.set(c.Name, id)
		m, jerr = MatchWithJudge(ctx, judge, c, findings, m)
		ju := judge.Usage(c.Name)
		usage.JudgeCalls, usage.JudgeTokens, usage.JudgeCost = ju.JudgeCalls, ju.JudgeTokens, ju.JudgeCost
	}
	res := Evaluate(c, findings, m, runtime, usage)
	res.ReviewID = id
	if jerr != nil {
		res.Error = jerr.Error()
	}
	return res
}

// CaseChange is what `reviewfleet review` would be asked for the case.
func CaseChange(c Case) Change {
	req := Change{Repo: c.RepoPath(), Base: c.Base, Head: c.Head, Purpose: c.Purpose}
	if c.Diff != "" {
		req.DiffFile = c.DiffPath()
		if IsRemote(req.Repo) {
			req.Repo = "" // a diff review reads contents from a local directory only
		}
	}
	return req
}

// ReportedFindings are the findings the review's report shows: the report
// stage's own selection (render.Select at the review's threshold).
func ReportedFindings(rep *render.Report) []Finding {
	out := make([]Finding, 0, len(rep.Findings))
	for _, f := range rep.Findings {
		out = append(out, Finding{
			ID: f.ID, File: f.File, StartLine: f.LineStart, EndLine: f.LineEnd, RiskType: string(f.RiskType),
			Severity: string(f.Severity), Description: f.Description,
		})
	}
	return out
}

// storedRun converts a run to its stored form.
func storedRun(r Run) store.EvalRun {
	// The stored settings: the harness toggles and the parallelism.
	settings := map[string]any{"parallel": r.Parallel}
	for k, v := range r.Harness {
		settings[k] = v
	}
	h, _ := json.Marshal(settings)
	t := r.Totals
	s := store.EvalRun{
		ID: r.ID, Dataset: r.Dataset, Label: r.Label, JudgeModel: r.JudgeModel, Window: r.Window, Harness: h,
		Cases: t.Cases, Golden: t.Golden, TP: t.TP, FP: t.FP, FN: t.FN, Precision: t.Precision, Recall: t.Recall, F1: t.F1,
		Runtime: t.Runtime, LLMCalls: t.LLMCalls, TokensIn: t.TokensIn, TokensOut: t.TokensOut, Cost: t.Cost,
		JudgeCalls: t.JudgeCalls, JudgeCost: t.JudgeCost,
	}
	for _, c := range r.Cases {
		detail, _ := json.Marshal(map[string]any{
			"per_risk_type": c.PerRiskType, "matching": c.Matching, "findings": c.Findings, "golden": c.GoldenIssues,
			"judge_calls": c.JudgeCalls, "judge_tokens": c.JudgeTokens, "judge_cost": c.JudgeCost,
		})
		s.Results = append(s.Results, store.EvalResult{
			Case: c.Name, ReviewID: c.ReviewID, Golden: c.Golden, TP: c.TP, FP: c.FP, FN: c.FN, Runtime: c.Runtime,
			LLMCalls: c.LLMCalls, TokensIn: c.TokensIn, TokensOut: c.TokensOut, Cost: c.Cost, Error: c.Error, Detail: detail,
		})
	}
	return s
}
