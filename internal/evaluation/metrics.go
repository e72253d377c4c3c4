package evaluation

// Counts are true positives (findings matched to a golden issue), false
// positives (findings matched to none) and false negatives (golden issues
// no finding matched). TP + FN is always the number of golden issues.
type Counts struct {
	TP int `json:"tp"`
	FP int `json:"fp"`
	FN int `json:"fn"`
}

// Add sums counts.
func (c Counts) Add(o Counts) Counts { return Counts{c.TP + o.TP, c.FP + o.FP, c.FN + o.FN} }

// Precision is TP / (TP + FP); 0 when nothing was reported.
func (c Counts) Precision() float64 { return ratio(c.TP, c.TP+c.FP) }

// Recall is TP / (TP + FN); 0 when there is no golden issue.
func (c Counts) Recall() float64 { return ratio(c.TP, c.TP+c.FN) }

// F1 is the harmonic mean of precision and recall; 0 when both are 0.
func (c Counts) F1() float64 { return ratio(2*c.TP, 2*c.TP+c.FP+c.FN) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// UnknownRiskType labels a golden issue without a risk type in per-risk-type
// counts.
const UnknownRiskType = "unspecified"

// Score counts a matching, in total and per risk type: a true positive
// counts under its golden issue's risk type (the finding's when the golden
// issue has none), a false positive under the finding's, and a miss under
// the golden issue's (UnknownRiskType when it has none).
func Score(findings []Finding, golden []Golden, m Matching) (Counts, map[string]Counts) {
	per := map[string]Counts{}
	bump := func(rt string, c Counts) {
		if rt == "" {
			rt = UnknownRiskType
		}
		per[rt] = per[rt].Add(c)
	}
	var total Counts
	for _, p := range m.Pairs {
		rt := golden[p.Golden].RiskType
		if rt == "" {
			rt = findings[p.Finding].RiskType
		}
		bump(rt, Counts{TP: 1})
		total.TP++
	}
	for _, i := range m.UnmatchedFindings {
		bump(findings[i].RiskType, Counts{FP: 1})
		total.FP++
	}
	for _, j := range m.UnmatchedGolden {
		bump(golden[j].RiskType, Counts{FN: 1})
		total.FN++
	}
	return total, per
}
