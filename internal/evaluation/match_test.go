package evaluation

import (
	"context"
	"errors"
	"testing"
)

func TestDistanceAndWindowEdges(t *testing.T) {
	g := Golden{File: "a.go", StartLine: 10, EndLine: 12, Text: "x"}
	for _, tc := range []struct {
		name   string
		f      Finding
		window int
		match  bool
		dist   int
	}{
		{"overlap", Finding{File: "a.go", StartLine: 11, EndLine: 11}, 0, true, 0},
		{"touching start", Finding{File: "a.go", StartLine: 9, EndLine: 10}, 0, true, 0},
		{"one before, window 0", Finding{File: "a.go", StartLine: 9, EndLine: 9}, 0, false, 1},
		{"three after, window 3", Finding{File: "./a.go", StartLine: 15, EndLine: 15}, 3, true, 3},
		{"four after, window 3", Finding{File: "a.go", StartLine: 16, EndLine: 20}, 3, false, 4},
		{"three before, window 3", Finding{File: "a.go", StartLine: 5, EndLine: 7}, 3, true, 3},
		{"end before start is one line", Finding{File: "a.go", StartLine: 13, EndLine: 0}, 1, true, 1},
		{"other file", Finding{File: "b.go", StartLine: 11, EndLine: 11}, 100, false, -1},
	} {
		d, ok := Distance(tc.f, g)
		m := MatchWindow([]Finding{tc.f}, []Golden{g}, tc.window)
		if got := len(m.Pairs) == 1; got != tc.match {
			t.Errorf("%s: matched %v, want %v", tc.name, got, tc.match)
		}
		if tc.dist >= 0 && (!ok || d != tc.dist) {
			t.Errorf("%s: distance %d %v, want %d", tc.name, d, ok, tc.dist)
		}
		if tc.dist < 0 && ok {
			t.Errorf("%s: other file must not have a distance", tc.name)
		}
	}
}

func TestMatchIsOneToOneNearestFirst(t *testing.T) {
	golden := []Golden{
		{File: "a.go", StartLine: 10, EndLine: 10, Text: "g0"},
		{File: "a.go", StartLine: 12, EndLine: 12, Text: "g1"},
		{File: "a.go", StartLine: 40, EndLine: 40, Text: "g2"},
		{Text: "text only"},
	}
	findings := []Finding{
		{ID: 1, File: "a.go", StartLine: 11, EndLine: 11}, // 1 from g0 and g1
		{ID: 2, File: "a.go", StartLine: 12, EndLine: 12}, // on g1
		{ID: 3, File: "a.go", StartLine: 12, EndLine: 12}, // duplicate of 2: no golden left near
		{ID: 4, File: "b.go", StartLine: 10, EndLine: 10},
	}
	m := MatchWindow(findings, golden, 3)
	want := map[int]int{0: 0, 1: 1} // finding 1 (on g1) goes first; finding 0 gets g0
	if len(m.Pairs) != len(want) {
		t.Fatalf("pairs %+v", m.Pairs)
	}
	for _, p := range m.Pairs {
		if want[p.Finding] != p.Golden || p.By != "window" {
			t.Errorf("pair %+v, want finding %d with golden %d", p, p.Finding, want[p.Finding])
		}
	}
	total, per := Score(findings, golden, m)
	if total != (Counts{TP: 2, FP: 2, FN: 2}) {
		t.Fatalf("counts %+v", total)
	}
	if total.TP+total.FN != len(golden) {
		t.Fatal("TP + FN must equal the golden issues")
	}
	if per[UnknownRiskType].FN != 2 {
		t.Errorf("per risk type %+v", per)
	}
}

// Whatever the findings, every golden issue is either matched or missed
// exactly once, and every finding is a TP or an FP exactly once.
func TestScoreConservesCounts(t *testing.T) {
	golden := []Golden{
		{File: "a.go", StartLine: 1, EndLine: 3, Text: "a", RiskType: "robustness"},
		{File: "a.go", StartLine: 2, EndLine: 2, Text: "b", RiskType: "concurrency"},
		{File: "c.go", StartLine: 7, EndLine: 9, Text: "c"},
	}
	for n := 0; n < 12; n++ {
		var findings []Finding
		for i := 0; i < n; i++ {
			findings = append(findings, Finding{File: []string{"a.go", "c.go"}[i%2], StartLine: i, EndLine: i + i%3, RiskType: "lifecycle"})
		}
		for w := 0; w < 5; w++ {
			total, per := Score(findings, golden, MatchWindow(findings, golden, w))
			if total.TP+total.FN != len(golden) || total.TP+total.FP != len(findings) {
				t.Fatalf("n=%d w=%d: %+v", n, w, total)
			}
			var sum Counts
			for _, c := range per {
				sum = sum.Add(c)
			}
			if sum != total {
				t.Fatalf("per risk type %+v does not add up to %+v", per, total)
			}
		}
	}
}

func TestMetrics(t *testing.T) {
	c := Counts{TP: 3, FP: 1, FN: 2}
	if c.Precision() != 0.75 || c.Recall() != 0.6 || c.F1() != 6.0/9.0 {
		t.Fatalf("%v %v %v", c.Precision(), c.Recall(), c.F1())
	}
	if z := (Counts{}); z.Precision() != 0 || z.Recall() != 0 || z.F1() != 0 {
		t.Fatal("empty counts must score 0, not NaN")
	}
}

type fakeJudge struct {
	asked  [][2]string
	answer func(f Finding, g Golden) bool
	err    error
}

func (j *fakeJudge) Judge(_ context.Context, _ Case, f Finding, g Golden) (Verdict, error) {
	j.asked = append(j.asked, [2]string{f.Description, g.Text})
	if j.err != nil {
		return Verdict{}, j.err
	}
	return Verdict{Match: j.answer(f, g), Reasoning: "because"}, nil
}

func TestJudgeMatchesOnlyWhatTheWindowLeft(t *testing.T) {
	c := Case{Name: "c", Golden: []Golden{
		{File: "a.go", StartLine: 10, EndLine: 10, Text: "near"},
		{Text: "imported comment"},
		{File: "z.go", StartLine: 1, EndLine: 1, Text: "other file"},
	}}
	findings := []Finding{
		{Description: "f0", File: "a.go", StartLine: 10, EndLine: 10},
		{Description: "f1", File: "a.go", StartLine: 90, EndLine: 90},
		{Description: "f2", File: "a.go", StartLine: 95, EndLine: 95},
	}
	j := &fakeJudge{answer: func(Finding, Golden) bool { return true }}
	m, err := MatchWithJudge(context.Background(), j, c, findings, MatchWindow(findings, c.Golden, 3))
	if err != nil {
		t.Fatal(err)
	}
	// f0 is matched by the window; f1 takes the text-only issue; f2 has no
	// candidate left (z.go is another file) and is never put to the judge.
	if len(j.asked) != 1 || j.asked[0] != [2]string{"f1", "imported comment"} {
		t.Fatalf("judge asked %v", j.asked)
	}
	total, _ := Score(findings, c.Golden, m)
	if total != (Counts{TP: 2, FP: 1, FN: 1}) {
		t.Fatalf("counts %+v pairs %+v", total, m.Pairs)
	}
	if m.Pairs[1].By != "judge" || m.Pairs[1].Reasoning != "because" {
		t.Errorf("judge pair %+v", m.Pairs[1])
	}

	j = &fakeJudge{err: errors.New("boom")}
	if _, err := MatchWithJudge(context.Background(), j, c, findings, MatchWindow(findings, c.Golden, 3)); err == nil {
		t.Fatal("a judge error must be returned")
	}
}

func TestCompareFollowsSeed000(t *testing.T) {
	const s = 1_000_000_000
	for _, tc := range []struct {
		name            string
		fp, fn          int
		rt              int64
		bfp, bfn        int
		brt             int64
		fpOK, fnOK, rt2 bool
	}{
		{"better", 1, 2, 13 * s, 3, 2, 10 * s, true, true, true},
		{"fp equal", 3, 2, 10 * s, 3, 2, 10 * s, false, true, true},
		{"both zero fp", 0, 0, 10 * s, 0, 0, 10 * s, true, true, true},
		{"fn up", 1, 3, 10 * s, 3, 2, 10 * s, true, false, true},
		{"31% slower", 1, 2, 13_100_000_000, 3, 2, 10 * s, true, true, false},
	} {
		var tot Totals
		tot.FP, tot.FN, tot.Runtime = tc.fp, tc.fn, durationOf(tc.rt)
		c := Compare(tot, Baseline{ID: "b", FP: tc.bfp, FN: tc.bfn, Runtime: durationOf(tc.brt)})
		if c.FPDown != tc.fpOK || c.FNNotUp != tc.fnOK || c.RuntimeOK != tc.rt2 || c.Pass != (tc.fpOK && tc.fnOK && tc.rt2) {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
}
