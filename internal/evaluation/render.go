package evaluation

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// WriteMarkdown writes a run as Markdown: totals, per risk type, then one
// line per case.
func WriteMarkdown(w io.Writer, r Run) error {
	var b strings.Builder
	t := r.Totals
	fmt.Fprintf(&b, "# Evaluation %s\n\n", r.ID)
	fmt.Fprintf(&b, "Dataset %s: %d cases, %d golden issues; window %d lines; judge %s; harness %s; %d case(s) at once.\n",
		r.Dataset, t.Cases, t.Golden, r.Window, orNone(r.JudgeModel), harnessText(r.Harness), max(1, r.Parallel))
	if r.Label != "" {
		fmt.Fprintf(&b, "Run: %s.\n", r.Label)
	}
	if t.Failed > 0 {
		fmt.Fprintf(&b, "\n**%d cases could not be reviewed**; their golden issues count as misses.\n", t.Failed)
	}
	fmt.Fprintf(&b, "\n## Totals\n\n| TP | FP | FN | precision | recall | F1 | FP per case | runtime | LLM calls | tokens | cost |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %.3f | %.3f | %.3f | %.2f | %s | %d | %d | $%.4f |\n",
		t.TP, t.FP, t.FN, t.Precision, t.Recall, t.F1, t.FPPerCase, dur(t.Runtime), t.LLMCalls, t.TokensIn+t.TokensOut, t.Cost)
	if t.JudgeCalls > 0 {
		fmt.Fprintf(&b, "\nThe judge made %d calls (%d tokens, $%.4f), not counted above.\n", t.JudgeCalls, t.JudgeTokens, t.JudgeCost)
	}
	fmt.Fprintf(&b, "\n## Per risk type\n\n| risk type | TP | FP | FN | precision | recall | F1 |\n|---|---|---|---|---|---|---|\n")
	for _, k := range slices.Sorted(maps.Keys(t.PerRiskType)) {
		c := t.PerRiskType[k]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.3f | %.3f | %.3f |\n", k, c.TP, c.FP, c.FN, c.Precision(), c.Recall(), c.F1())
	}
	if len(t.ForeignLabels) > 0 {
		fmt.Fprintf(&b, "\nLabels of the dataset that reviewfleet does not use: %s. No finding carries them: their rows count "+
			"the issues matched and missed, and false positives count under the findings' own risk types.\n",
			strings.Join(t.ForeignLabels, ", "))
	}
	fmt.Fprintf(&b, "\n## Cases\n\n| case | golden | TP | FP | FN | precision | recall | F1 | runtime | LLM calls | tokens | cost | review |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range r.Cases {
		review := c.ReviewID
		if c.Error != "" {
			review = "not reviewed: " + strings.ReplaceAll(c.Error, "|", "/")
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %.3f | %.3f | %.3f | %s | %d | %d | $%.4f | %s |\n",
			c.Name, c.Golden, c.TP, c.FP, c.FN, c.Precision, c.Recall, c.F1, dur(c.Runtime), c.LLMCalls,
			c.TokensIn+c.TokensOut, c.Cost, review)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteComparison writes seed 000's verdict on a run against a baseline,
// ending with a PASS or FAIL line.
func WriteComparison(w io.Writer, c Comparison) error {
	mark := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "NOT MET"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Compared with run %s\n\n| criterion | baseline | this run | |\n|---|---|---|---|\n", c.BaselineID)
	fmt.Fprintf(&b, "| false positives go down | %d | %d | %s |\n", c.BaselineFP, c.FP, mark(c.FPDown))
	fmt.Fprintf(&b, "| false negatives do not go up | %d | %d | %s |\n", c.BaselineFN, c.FN, mark(c.FNNotUp))
	fmt.Fprintf(&b, "| runtime at most +%.0f%% | %s | %s (%+.1f%%) | %s |\n", MaxRuntimeGrowth*100,
		dur(time.Duration(c.BaselineRuntime)*time.Millisecond), dur(time.Duration(c.RuntimeMS)*time.Millisecond),
		c.RuntimeGrowth*100, mark(c.RuntimeOK))
	if c.Pass {
		b.WriteString("\nPASS: FP down, FN not up, runtime within +30% of run " + c.BaselineID + "\n")
	} else {
		b.WriteString("\nFAIL: " + strings.Join(c.failures(), ", ") + " (against run " + c.BaselineID + ")\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (c Comparison) failures() []string {
	var out []string
	if !c.FPDown {
		out = append(out, fmt.Sprintf("FP not down (%d → %d)", c.BaselineFP, c.FP))
	}
	if !c.FNNotUp {
		out = append(out, fmt.Sprintf("FN up (%d → %d)", c.BaselineFN, c.FN))
	}
	if !c.RuntimeOK {
		out = append(out, fmt.Sprintf("runtime %+.1f%%", c.RuntimeGrowth*100))
	}
	return out
}

// Delta is how a run with one toggle off differs from the run with every
// toggle on: each field is off − on.
type Delta struct {
	Toggle    string  `json:"toggle"`
	OnRunID   string  `json:"on_run_id"`
	OffRunID  string  `json:"off_run_id"`
	TP        int     `json:"tp"`
	FP        int     `json:"fp"`
	FN        int     `json:"fn"`
	F1        float64 `json:"f1"`
	RuntimeMS int64   `json:"runtime_ms"`
	LLMCalls  int     `json:"llm_calls"`
}

// Diff is the delta of off against on for toggle.
func Diff(toggle string, on, off Run) Delta {
	a, b := on.Totals, off.Totals
	return Delta{
		Toggle: toggle, OnRunID: on.ID, OffRunID: off.ID,
		TP: b.TP - a.TP, FP: b.FP - a.FP, FN: b.FN - a.FN, F1: b.F1 - a.F1,
		RuntimeMS: b.RuntimeMS - a.RuntimeMS, LLMCalls: b.LLMCalls - a.LLMCalls,
	}
}

// WriteAblation writes the table of deltas of an ablation.
func WriteAblation(w io.Writer, on Run, deltas []Delta) error {
	var b strings.Builder
	t := on.Totals
	fmt.Fprintf(&b, "\n## Ablation (each toggle off, against run %s with all on: TP %d, FP %d, FN %d, F1 %.3f, runtime %s, %d calls)\n\n",
		on.ID, t.TP, t.FP, t.FN, t.F1, dur(t.Runtime), t.LLMCalls)
	b.WriteString("| toggle off | run | ΔTP | ΔFP | ΔFN | ΔF1 | Δruntime | ΔLLM calls |\n|---|---|---|---|---|---|---|---|\n")
	for _, d := range deltas {
		fmt.Fprintf(&b, "| %s | %s | %+d | %+d | %+d | %+.3f | %+.1fs | %+d |\n", d.Toggle, d.OffRunID, d.TP, d.FP, d.FN, d.F1,
			float64(d.RuntimeMS)/1000, d.LLMCalls)
	}
	b.WriteString("\nEach Δ is (toggle off) − (all on): a negative ΔFP means the toggle's stage adds false positives.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func harnessText(h map[string]bool) string {
	if len(h) == 0 {
		return "as configured"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(h)) {
		v := "on"
		if !h[k] {
			v = "off"
		}
		parts = append(parts, k+" "+v)
	}
	return strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func dur(d time.Duration) string { return d.Round(10 * time.Millisecond).String() }
