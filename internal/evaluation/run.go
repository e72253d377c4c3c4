package evaluation

import (
	"sort"
	"time"
)

// Usage is what reviewing (and judging) cost.
type Usage struct {
	LLMCalls  int     `json:"llm_calls"`
	TokensIn  int64   `json:"tokens_in"`
	TokensOut int64   `json:"tokens_out"`
	Cost      float64 `json:"cost"` // estimated US dollars, from llm.prices
	// The judge's part, kept apart so that comparing harness settings is
	// not skewed by how many findings needed a judge.
	JudgeCalls  int     `json:"judge_calls"`
	JudgeTokens int64   `json:"judge_tokens"`
	JudgeCost   float64 `json:"judge_cost"`
}

func (u Usage) add(o Usage) Usage {
	return Usage{
		LLMCalls: u.LLMCalls + o.LLMCalls, TokensIn: u.TokensIn + o.TokensIn, TokensOut: u.TokensOut + o.TokensOut,
		Cost: u.Cost + o.Cost, JudgeCalls: u.JudgeCalls + o.JudgeCalls, JudgeTokens: u.JudgeTokens + o.JudgeTokens,
		JudgeCost: u.JudgeCost + o.JudgeCost,
	}
}

// CaseResult is one case evaluated.
type CaseResult struct {
	Name     string `json:"name"`
	ReviewID string `json:"review_id,omitempty"`
	// Error says why the case could not be reviewed or judged; its golden
	// issues then all count as misses.
	Error string `json:"error,omitempty"`
	Counts
	Golden      int               `json:"golden"`
	Precision   float64           `json:"precision"`
	Recall      float64           `json:"recall"`
	F1          float64           `json:"f1"`
	PerRiskType map[string]Counts `json:"per_risk_type"`
	Runtime     time.Duration     `json:"-"`
	RuntimeMS   int64             `json:"runtime_ms"`
	Usage
	Findings     []Finding `json:"findings"`
	GoldenIssues []Golden  `json:"golden_issues"`
	Matching     Matching  `json:"matching"`
}

// Evaluate scores one reviewed case from its matching.
func Evaluate(c Case, findings []Finding, m Matching, runtime time.Duration, u Usage) CaseResult {
	total, per := Score(findings, c.Golden, m)
	r := CaseResult{
		Name: c.Name, Counts: total, Golden: len(c.Golden), PerRiskType: per,
		Runtime: runtime, Usage: u, Findings: findings, GoldenIssues: c.Golden, Matching: m,
	}
	r.fill()
	return r
}

// Failed is a case that could not be reviewed: every golden issue is a
// miss, so TP + FN still equals the golden issues.
func Failed(c Case, err error, runtime time.Duration, u Usage) CaseResult {
	m := Matching{Pairs: []Pair{}, UnmatchedFindings: []int{}, UnmatchedGolden: make([]int, len(c.Golden))}
	for j := range c.Golden {
		m.UnmatchedGolden[j] = j
	}
	r := Evaluate(c, nil, m, runtime, u)
	r.Error = err.Error()
	return r
}

func (r *CaseResult) fill() {
	r.Precision, r.Recall, r.F1 = r.Counts.Precision(), r.Counts.Recall(), r.Counts.F1()
	r.RuntimeMS = r.Runtime.Milliseconds()
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
}

// Run is one evaluation of a dataset.
type Run struct {
	ID         string          `json:"run_id"`
	Dataset    string          `json:"dataset"`
	Label      string          `json:"label,omitempty"`
	JudgeModel string          `json:"judge_model,omitempty"`
	Window     int             `json:"window"`
	Harness    map[string]bool `json:"harness"`
	// Parallel is how many cases were under review at once: case runtimes
	// of runs with different values do not compare.
	Parallel int          `json:"parallel"`
	Totals   Totals       `json:"totals"`
	Cases    []CaseResult `json:"cases"`
}

// Totals sums a run's cases.
type Totals struct {
	Counts
	Cases       int               `json:"cases"`
	Golden      int               `json:"golden"`
	Failed      int               `json:"failed_cases"`
	Precision   float64           `json:"precision"`
	Recall      float64           `json:"recall"`
	F1          float64           `json:"f1"`
	FPPerCase   float64           `json:"fp_per_case"`
	PerRiskType map[string]Counts `json:"per_risk_type"`
	// ForeignLabels are the golden issues' labels that are not reviewfleet
	// risk types, sorted: no finding carries them, so their columns hold
	// matches and misses only, and false positives count under the
	// findings' own risk types.
	ForeignLabels []string      `json:"foreign_labels"`
	Runtime       time.Duration `json:"-"`
	RuntimeMS     int64         `json:"runtime_ms"` // the sum of the cases' review times
	Usage
}

// Sum computes the run's totals from its cases. Precision, recall and F1
// are micro-averaged: computed from the summed counts.
func (r *Run) Sum() {
	t := Totals{Cases: len(r.Cases), PerRiskType: map[string]Counts{}, ForeignLabels: []string{}}
	foreign := map[string]bool{}
	for _, c := range r.Cases {
		for _, g := range c.GoldenIssues {
			if g.Foreign() && !foreign[g.RiskType] {
				foreign[g.RiskType] = true
				t.ForeignLabels = append(t.ForeignLabels, g.RiskType)
			}
		}
		t.Counts = t.Counts.Add(c.Counts)
		t.Golden += c.Golden
		t.Runtime += c.Runtime
		t.Usage = t.Usage.add(c.Usage)
		if c.Error != "" {
			t.Failed++
		}
		for k, v := range c.PerRiskType {
			t.PerRiskType[k] = t.PerRiskType[k].Add(v)
		}
	}
	sort.Strings(t.ForeignLabels)
	t.Precision, t.Recall, t.F1 = t.Counts.Precision(), t.Counts.Recall(), t.Counts.F1()
	if t.Cases > 0 {
		t.FPPerCase = float64(t.FP) / float64(t.Cases)
	}
	t.RuntimeMS = t.Runtime.Milliseconds()
	r.Totals = t
}

// MaxRuntimeGrowth is seed 000's limit on how much slower a harness change
// may make a review: at most 30% more total runtime.
const MaxRuntimeGrowth = 0.30

// Baseline is what a run is compared with: an earlier run's totals.
type Baseline struct {
	ID      string
	FP, FN  int
	Runtime time.Duration
}

// Comparison applies seed 000's criteria to a run against a baseline.
type Comparison struct {
	BaselineID      string  `json:"baseline_run_id"`
	FP              int     `json:"fp"`
	BaselineFP      int     `json:"baseline_fp"`
	FN              int     `json:"fn"`
	BaselineFN      int     `json:"baseline_fn"`
	RuntimeMS       int64   `json:"runtime_ms"`
	BaselineRuntime int64   `json:"baseline_runtime_ms"`
	RuntimeGrowth   float64 `json:"runtime_growth"` // (runtime − baseline) / baseline
	FPDown          bool    `json:"fp_down"`
	FNNotUp         bool    `json:"fn_not_up"`
	RuntimeOK       bool    `json:"runtime_ok"`
	Pass            bool    `json:"pass"`
}

// Compare applies seed 000's three criteria: fewer false positives than
// the baseline (when both have none, nothing can go down and the criterion
// holds: FP did not go up), no more false negatives, and a runtime at most
// MaxRuntimeGrowth above the baseline's. It passes only when all three hold.
func Compare(t Totals, b Baseline) Comparison {
	c := Comparison{
		BaselineID: b.ID, FP: t.FP, BaselineFP: b.FP, FN: t.FN, BaselineFN: b.FN,
		RuntimeMS: t.Runtime.Milliseconds(), BaselineRuntime: b.Runtime.Milliseconds(),
	}
	c.FPDown = t.FP < b.FP || (t.FP == 0 && b.FP == 0)
	c.FNNotUp = t.FN <= b.FN
	if b.Runtime > 0 {
		c.RuntimeGrowth = float64(t.Runtime-b.Runtime) / float64(b.Runtime)
	}
	c.RuntimeOK = float64(t.Runtime) <= float64(b.Runtime)*(1+MaxRuntimeGrowth)
	c.Pass = c.FPDown && c.FNNotUp && c.RuntimeOK
	return c
}
