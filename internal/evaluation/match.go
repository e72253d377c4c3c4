package evaluation

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
)

// Finding is a reported finding as evaluation sees it.
type Finding struct {
	ID          int64  `json:"id"`
	File        string `json:"file"`
	StartLine   int    `json:"start_line"`
	EndLine     int    `json:"end_line"`
	RiskType    string `json:"risk_type"`
	Severity    string `json:"severity"`
	Description string `json:"description"`
}

// Pair is a finding matched to a golden issue, by index into the lists
// given to Match.
type Pair struct {
	Finding int    `json:"finding"`
	Golden  int    `json:"golden"`
	By      string `json:"by"` // "window" or "judge"
	// Distance is how many lines apart the two ranges are (0: they overlap).
	Distance int `json:"distance"`
	// Reasoning is the judge's, for a judge match.
	Reasoning string `json:"reasoning,omitempty"`
}

// Matching is the outcome of matching one case: every finding and every
// golden issue is either in exactly one pair or unmatched.
type Matching struct {
	Pairs []Pair `json:"pairs"`
	// UnmatchedFindings are false positives, UnmatchedGolden misses.
	UnmatchedFindings []int `json:"unmatched_findings"`
	UnmatchedGolden   []int `json:"unmatched_golden"`
}

// Distance is how many lines separate a finding from a golden issue in
// the same file: 0 when the ranges overlap, otherwise the gap between the
// nearest ends. ok is false when they cannot match by lines at all (other
// file, or a golden issue without a file).
func Distance(f Finding, g Golden) (d int, ok bool) {
	if g.File == "" || cleanPath(f.File) != cleanPath(g.File) {
		return 0, false
	}
	fs, fe := f.StartLine, max(f.EndLine, f.StartLine)
	return max(0, g.StartLine-fe, fs-g.EndLine), true
}

func cleanPath(p string) string {
	return strings.TrimPrefix(path.Clean(strings.TrimPrefix(strings.ReplaceAll(p, "\\", "/"), "./")), "/")
}

// MatchWindow pairs findings with golden issues one to one by lines: a
// pair is possible when the file is the same and the ranges are at most
// window lines apart. The choice is greedy by distance: all possible pairs
// are taken nearest first (ties: the earlier finding, then the earlier
// golden issue), skipping a pair whose finding or golden issue is already
// taken. Greedy is not always the largest matching, but within a few lines
// it rarely differs, and it is easy to predict.
func MatchWindow(findings []Finding, golden []Golden, window int) Matching {
	type cand struct{ f, g, d int }
	var cands []cand
	for i, f := range findings {
		for j, g := range golden {
			if d, ok := Distance(f, g); ok && d <= window {
				cands = append(cands, cand{i, j, d})
			}
		}
	}
	sort.SliceStable(cands, func(a, b int) bool {
		if cands[a].d != cands[b].d {
			return cands[a].d < cands[b].d
		}
		if cands[a].f != cands[b].f {
			return cands[a].f < cands[b].f
		}
		return cands[a].g < cands[b].g
	})
	usedF := make([]bool, len(findings))
	usedG := make([]bool, len(golden))
	var m Matching
	for _, c := range cands {
		if usedF[c.f] || usedG[c.g] {
			continue
		}
		usedF[c.f], usedG[c.g] = true, true
		m.Pairs = append(m.Pairs, Pair{Finding: c.f, Golden: c.g, By: "window", Distance: c.d})
	}
	m.fillUnmatched(usedF, usedG)
	return m
}

func (m *Matching) fillUnmatched(usedF, usedG []bool) {
	m.UnmatchedFindings, m.UnmatchedGolden = []int{}, []int{}
	for i, u := range usedF {
		if !u {
			m.UnmatchedFindings = append(m.UnmatchedFindings, i)
		}
	}
	for j, u := range usedG {
		if !u {
			m.UnmatchedGolden = append(m.UnmatchedGolden, j)
		}
	}
	sort.SliceStable(m.Pairs, func(a, b int) bool { return m.Pairs[a].Finding < m.Pairs[b].Finding })
}

// Judge decides whether a finding describes a golden issue.
type Judge interface {
	Judge(ctx context.Context, c Case, f Finding, g Golden) (Verdict, error)
}

// Verdict is a judge's answer.
type Verdict struct {
	Match     bool   `json:"match"`
	Reasoning string `json:"reasoning"`
}

// JudgeCandidate reports whether the judge is asked about a finding and a
// golden issue: a golden issue without a file (an imported comment), or
// one in the finding's file. Issues in other files are never the same.
func JudgeCandidate(f Finding, g Golden) bool {
	return g.File == "" || cleanPath(g.File) == cleanPath(f.File)
}

// MatchWithJudge extends a window matching with a judge: each unmatched
// finding, in order, is put to the judge against each still-unmatched
// golden issue that is a JudgeCandidate, in order, until the judge says
// they match. A judge error stops the matching and is returned with the
// matching so far.
func MatchWithJudge(ctx context.Context, j Judge, c Case, findings []Finding, m Matching) (Matching, error) {
	usedF := make([]bool, len(findings))
	usedG := make([]bool, len(c.Golden))
	for _, p := range m.Pairs {
		usedF[p.Finding], usedG[p.Golden] = true, true
	}
	var err error
outer:
	for _, fi := range m.UnmatchedFindings {
		for _, gi := range m.UnmatchedGolden {
			if usedG[gi] || !JudgeCandidate(findings[fi], c.Golden[gi]) {
				continue
			}
			v, jerr := j.Judge(ctx, c, findings[fi], c.Golden[gi])
			if jerr != nil {
				err = fmt.Errorf("judge finding %d against golden issue %d of %s: %w", fi, gi, c.Name, jerr)
				break outer
			}
			if v.Match {
				usedF[fi], usedG[gi] = true, true
				d, _ := Distance(findings[fi], c.Golden[gi])
				m.Pairs = append(m.Pairs, Pair{Finding: fi, Golden: gi, By: "judge", Distance: d, Reasoning: v.Reasoning})
				break
			}
		}
	}
	m.fillUnmatched(usedF, usedG)
	return m, err
}
