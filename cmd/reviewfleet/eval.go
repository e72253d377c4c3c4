package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/evaluation"
	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/internal/syncio"
	"github.com/reviewfleet/reviewfleet/store"
)

const evalUsage = `Usage:
  reviewfleet eval --dataset DIR [--judge-model M] [--window N] [--compare RUN_ID] [--toggles verify,eval,progressive_context] [--parallel N] [--format markdown|json]
  reviewfleet eval import --golden FILE.json --out DIR

Reviews every case of a dataset the way 'reviewfleet review' does, matches the reported findings to
the golden issues and prints TP, FP, FN, precision, recall and F1 per case and in total. Each run is
stored (eval_runs, eval_results); --compare RUN_ID applies seed 000's criteria against an earlier
run (FP down, FN not up, runtime at most +30%) and exits 1 on FAIL. See docs/eval.md.

`

// harnessToggles maps --toggles names to the harness settings they flip.
var harnessToggles = map[string]func(*config.Harness) *bool{
	"verify":              func(h *config.Harness) *bool { return &h.VerifyEnabled },
	"eval":                func(h *config.Harness) *bool { return &h.EvalEnabled },
	"progressive_context": func(h *config.Harness) *bool { return &h.ProgressiveContextEnabled },
}

func cmdEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "import" {
		return cmdEvalImport(ctx, args[1:], stdout, stderr)
	}
	fs, cfgPath := newFlags("eval", stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), evalUsage)
		fs.PrintDefaults()
	}
	dataset := fs.String("dataset", "", "dataset directory: one JSON file per case (docs/eval.md)")
	judgeModel := fs.String("judge-model", "", "model that may match a finding the line window leaves unmatched (default evaluation.judge_model; empty: no judge)")
	compare := fs.String("compare", "", "an earlier run's ID: print seed 000's criteria against it, exit 1 on FAIL")
	format := fs.String("format", "markdown", "output format: markdown or json")
	window := fs.Int("window", 0, "lines a finding and a golden issue may be apart and still match (default evaluation.window)")
	toggles := fs.String("toggles", "", "harness ablation: comma-separated toggles (verify, eval, progressive_context) each run off against all on")
	label := fs.String("label", "", "a label stored with the run")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	parallel := fs.Int("parallel", 1, "cases under review at once; above 1 needs a fleet (REDIS_URL and DATABASE_URL, with workers running)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *dataset == "" {
		return exitError{code: exitUsage, err: errors.New("eval needs --dataset DIR")}
	}
	if *format != "markdown" && *format != "md" && *format != "json" {
		return exitError{code: exitUsage, err: fmt.Errorf("unknown --format %q (markdown or json)", *format)}
	}
	if set["window"] && *window < 0 {
		return exitError{code: exitUsage, err: errors.New("--window must not be negative")}
	}
	if *parallel < 1 {
		return exitError{code: exitUsage, err: errors.New("--parallel must be at least 1")}
	}
	ablate, err := parseToggles(*toggles)
	if err != nil {
		return exitError{code: exitUsage, err: err}
	}
	cases, err := evaluation.LoadDataset(*dataset)
	if err != nil {
		return exitError{code: exitUsage, err: err}
	}

	a, closeApp, err := open(ctx, *cfgPath, stderr, app.Options{}, nil)
	if err != nil {
		return err
	}
	defer closeApp()
	if *parallel > 1 && a.LocalRedis {
		// The in-process fleet admits the one review this command waits
		// for; concurrent cases need the fleet's admission.
		return exitError{code: exitUsage, err: errors.New("--parallel above 1 needs a fleet: set REDIS_URL and DATABASE_URL and run `reviewfleet worker` (without them the cases run one after another in this command)")}
	}
	ev := &evaluator{a: a, dataset: *dataset, label: *label, window: a.Cfg.Evaluation.Window, judgeModel: a.Cfg.Evaluation.JudgeModel,
		parallel: *parallel}
	if set["window"] {
		ev.window = *window
	}
	if set["judge-model"] {
		ev.judgeModel = *judgeModel
	}
	ev.progress = &syncio.Writer{W: stderr} // cases under review at once share it
	if *quiet {
		ev.progress = io.Discard
	}
	var baseline *store.EvalRun
	if *compare != "" {
		b, err := a.Store.GetEvalRun(ctx, *compare)
		if err != nil {
			return exitError{code: exitUsage, err: fmt.Errorf("--compare: %w", err)}
		}
		baseline = &b
		if b.Dataset != *dataset || b.Cases != len(cases) {
			fmt.Fprintf(stderr, "reviewfleet: warning: run %s evaluated %s (%d cases), this run %s (%d cases): the comparison may not mean much\n",
				b.ID, b.Dataset, b.Cases, *dataset, len(cases))
		}
		if p := storedParallel(b.Harness); p != *parallel {
			fmt.Fprintf(stderr, "reviewfleet: warning: run %s reviewed %d case(s) at once, this run %d: case runtimes include the wait for a worker, so the runtime criterion may not mean much\n",
				b.ID, p, *parallel)
		}
	}

	out := evalOutput{}
	base := a.Cfg.Harness
	if len(ablate) > 0 {
		for _, t := range ablate {
			*harnessToggles[t](&base) = true
		}
	}
	allOn, err := ev.run(ctx, cases, base, labelFor(*label, ablate, ""))
	if err != nil {
		return err
	}
	out.Run = allOn
	for _, t := range ablate {
		h := base
		*harnessToggles[t](&h) = false
		off, err := ev.run(ctx, cases, h, labelFor(*label, ablate, t))
		if err != nil {
			return err
		}
		out.Ablation = append(out.Ablation, ablationRun{Toggle: t, Run: off, Delta: evaluation.Diff(t, allOn, off)})
	}
	if baseline != nil {
		c := evaluation.Compare(allOn.Totals, evaluation.Baseline{ID: baseline.ID, FP: baseline.FP, FN: baseline.FN, Runtime: baseline.Runtime})
		out.Compare = &c
	}
	if err := out.write(stdout, *format); err != nil {
		return err
	}
	if out.Compare != nil && !out.Compare.Pass {
		return exitError{code: exitFindings, err: fmt.Errorf("eval run %s fails seed 000's criteria against run %s", allOn.ID, baseline.ID)}
	}
	return nil
}

// parseToggles reads --toggles.
func parseToggles(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if _, ok := harnessToggles[t]; !ok {
			return nil, fmt.Errorf("--toggles: unknown toggle %q (verify, eval or progressive_context)", t)
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
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

// evaluator runs a dataset through the review path and scores it.
type evaluator struct {
	a          *app.App
	dataset    string
	label      string
	window     int
	judgeModel string
	progress   io.Writer
	parallel   int // cases under review at once (1 without a fleet)
}

// run reviews every case with the harness settings h, scores the cases,
// stores the run and returns it.
func (e *evaluator) run(ctx context.Context, cases []evaluation.Case, h config.Harness, label string) (evaluation.Run, error) {
	r := evaluation.Run{
		ID: uuid.NewString(), Dataset: e.dataset, Label: label, JudgeModel: e.judgeModel, Window: e.window,
		Harness:  map[string]bool{"verify": h.VerifyEnabled, "eval": h.EvalEnabled, "progressive_context": h.ProgressiveContextEnabled},
		Parallel: max(1, e.parallel),
	}
	var judge *evaluation.LLMJudge
	reviewOf := &caseReviews{ids: map[string]string{}}
	if e.judgeModel != "" {
		prices := e.a.Cfg.LLM.Prices
		judge = &evaluation.LLMJudge{
			LLM: e.a.LLM, Model: e.judgeModel,
			ReviewID: reviewOf.get,
			Cost: func(model string, in, out int) float64 {
				return app.CallCost(prices, model, in, out)
			},
		}
	}
	// Results keep the dataset's order whatever order the cases end in.
	results := make([]evaluation.CaseResult, len(cases))
	slots := make(chan struct{}, max(1, e.parallel))
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
			fmt.Fprintf(e.progress, "eval %s: case %d/%d %s\n", orAll(label), i+1, len(cases), c.Name)
			results[i] = e.evalCase(ctx, c, h, judge, reviewOf)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	r.Cases = results
	r.Sum()
	if err := e.a.Store.SaveEvalRun(ctx, storedRun(r)); err != nil {
		return r, err
	}
	return r, nil
}

// storedParallel reads the parallelism stored with a run's settings; a
// run stored without one counts as one case at a time.
func storedParallel(settings []byte) int {
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

func (m *caseReviews) get(c evaluation.Case) string {
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
func (e *evaluator) evalCase(ctx context.Context, c evaluation.Case, h config.Harness, judge *evaluation.LLMJudge, reviewOf *caseReviews) evaluation.CaseResult {
	start := time.Now()
	id, rep, err := reviewCase(ctx, e.a, caseRequest(c), h, e.progress)
	runtime := time.Since(start)
	if err != nil {
		res := evaluation.Failed(c, err, runtime, evaluation.Usage{})
		res.ReviewID = id
		return res
	}
	usage := evaluation.Usage{LLMCalls: rep.Usage.LLMCalls, TokensIn: int64(rep.Usage.TokensIn), TokensOut: int64(rep.Usage.TokensOut), Cost: rep.Usage.Cost}
	findings := reportedFindings(rep)
	m := evaluation.MatchWindow(findings, c.Golden, e.window)
	var jerr error
	if judge != nil {
		reviewOf.set(c.Name, id)
		m, jerr = evaluation.MatchWithJudge(ctx, judge, c, findings, m)
		ju := judge.Usage(c.Name)
		usage.JudgeCalls, usage.JudgeTokens, usage.JudgeCost = ju.JudgeCalls, ju.JudgeTokens, ju.JudgeCost
	}
	res := evaluation.Evaluate(c, findings, m, runtime, usage)
	res.ReviewID = id
	if jerr != nil {
		res.Error = jerr.Error()
	}
	return res
}

// caseRequest is what `reviewfleet review` would be asked for the case.
func caseRequest(c evaluation.Case) submit.Request {
	req := submit.Request{Repo: c.RepoPath(), Base: c.Base, Head: c.Head, Purpose: c.Purpose}
	if c.Diff != "" {
		req.DiffFile = c.DiffPath()
		if evaluation.IsRemote(req.Repo) {
			req.Repo = "" // a diff review reads contents from a local directory only
		}
	}
	return req
}

// reportedFindings are the findings the review's report shows: the report
// stage's own selection (render.Select at the review's threshold).
func reportedFindings(rep *render.Report) []evaluation.Finding {
	out := make([]evaluation.Finding, 0, len(rep.Findings))
	for _, f := range rep.Findings {
		out = append(out, evaluation.Finding{
			ID: f.ID, File: f.File, StartLine: f.LineStart, EndLine: f.LineEnd, RiskType: string(f.RiskType),
			Severity: string(f.Severity), Description: f.Description,
		})
	}
	return out
}

// reviewCase reviews one case with the harness settings h exactly as
// `reviewfleet review` does, and returns the review's ID and report.
func reviewCase(ctx context.Context, a *app.App, req submit.Request, h config.Harness, progOut io.Writer) (string, *render.Report, error) {
	out, err := a.RunReview(ctx, app.ReviewRequest{Change: req}, app.RunOptions{Harness: &h})
	id, r := out.ID, out.Review
	if err != nil {
		if id == "" {
			return "", nil, err
		}
		return id, nil, fmt.Errorf("review %s: %w", id, err)
	}
	if r.Status == store.StatusFailed {
		return id, nil, fmt.Errorf("review %s failed: %s", id, r.Error)
	}
	rep, err := a.Report(ctx, id)
	if err != nil {
		return id, nil, err
	}
	if r.Incomplete {
		fmt.Fprintf(progOut, "eval: review %s is incomplete (%d items could not be reviewed); its findings count as they are\n", id, r.FailedItems)
	}
	return id, rep, nil
}

// storedRun converts a run to its stored form.
func storedRun(r evaluation.Run) store.EvalRun {
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

// evalOutput is what the command prints.
type evalOutput struct {
	evaluation.Run
	Compare  *evaluation.Comparison `json:"compare,omitempty"`
	Ablation []ablationRun          `json:"ablation,omitempty"`
}

type ablationRun struct {
	Toggle string           `json:"toggle"`
	Run    evaluation.Run   `json:"run"`
	Delta  evaluation.Delta `json:"delta"`
}

func (o evalOutput) write(w io.Writer, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(o)
	}
	if err := evaluation.WriteMarkdown(w, o.Run); err != nil {
		return err
	}
	if len(o.Ablation) > 0 {
		deltas := make([]evaluation.Delta, len(o.Ablation))
		for i, a := range o.Ablation {
			deltas[i] = a.Delta
		}
		if err := evaluation.WriteAblation(w, o.Run, deltas); err != nil {
			return err
		}
	}
	if o.Compare != nil {
		return evaluation.WriteComparison(w, *o.Compare)
	}
	return nil
}
