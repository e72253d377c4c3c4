package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/evaluation"
	"github.com/reviewfleet/reviewfleet/internal/syncio"
	"github.com/reviewfleet/reviewfleet/store"
)

const evalUsage = `usage: reviewfleet eval --dataset DIR [--judge-model M] [--window N] [--compare RUN_ID] [--toggles verify,eval,progressive_context] [--parallel N] [--format markdown|json]
  reviewfleet eval import --golden FILE.json --out DIR

Reviews every case of a dataset the way 'reviewfleet review' does, matches the reported findings to
the golden issues and prints TP, FP, FN, precision, recall and F1 per case and in total. Each run is
stored (eval_runs, eval_results); --compare RUN_ID applies the regression criteria against an earlier
run (FP down, FN not up, runtime at most +30%) and exits 1 on FAIL. See docs/eval.md.
`

func cmdEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "import" {
		return cmdEvalImport(ctx, args[1:], stdout, stderr)
	}
	fs, cfgPath := newFlags("eval", stderr)
	dataset := fs.String("dataset", "", "dataset directory: one JSON file per case (docs/eval.md)")
	judgeModel := fs.String("judge-model", "", "model that may match a finding the line window leaves unmatched (default evaluation.judge_model; empty: no judge)")
	compare := fs.String("compare", "", "an earlier run's ID: print the regression criteria against it (false positives down, misses not up, runtime within +30%), exit 1 on FAIL")
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
	ablate, err := evaluation.ParseToggles(*toggles)
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
	ev := a.Evaluator()
	ev.Dataset, ev.Label, ev.Parallel = *dataset, *label, *parallel
	if set["window"] {
		ev.Window = *window
	}
	if set["judge-model"] {
		ev.JudgeModel = *judgeModel
	}
	ev.Progress = &syncio.Writer{W: stderr} // cases under review at once share it
	if *quiet {
		ev.Progress = io.Discard
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
		if p := evaluation.StoredParallel(b.Harness); p != *parallel {
			fmt.Fprintf(stderr, "reviewfleet: warning: run %s reviewed %d case(s) at once, this run %d: case runtimes include the wait for a worker, so the runtime criterion may not mean much\n",
				b.ID, p, *parallel)
		}
	}

	var base *evaluation.Baseline
	if baseline != nil {
		base = &evaluation.Baseline{ID: baseline.ID, FP: baseline.FP, FN: baseline.FN, Runtime: baseline.Runtime}
	}
	out, err := ev.Evaluate(ctx, cases, a.Cfg.Harness, ablate, base)
	if err != nil {
		return err
	}
	if err := writeEval(stdout, out, *format); err != nil {
		return err
	}
	if out.Compare != nil && !out.Compare.Pass {
		return exitError{code: exitFindings, err: fmt.Errorf("eval run %s fails the regression criteria against run %s", out.ID, baseline.ID)}
	}
	return nil
}

// writeEval prints an evaluation in format (markdown or json).
func writeEval(w io.Writer, o evaluation.Outcome, format string) error {
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
