package evaluation

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// scriptedReviewer knows each case's truth: it reports the golden issues
// of the cases named in finds and fails the cases named in fails. With
// holdFirst, the first case's review ends only after the last one's, so
// a run with every case under review at once sees them end out of order.
type scriptedReviewer struct {
	cases        map[string]Case // by repository
	finds        map[string]bool
	fails        map[string]bool
	holdFirst    bool
	firstStarted chan struct{}
	lastDone     chan struct{}

	mu       sync.Mutex
	harness  []config.Harness
	inFlight int
	maxAtOne int
}

func (s *scriptedReviewer) review(ctx context.Context, ch Change, h config.Harness) (Reviewed, error) {
	c := s.cases[ch.Repo]
	s.mu.Lock()
	s.harness = append(s.harness, h)
	s.inFlight++
	s.maxAtOne = max(s.maxAtOne, s.inFlight)
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.inFlight--; s.mu.Unlock() }()
	if s.holdFirst {
		switch c.Name {
		case "found":
			close(s.firstStarted)
			select {
			case <-s.lastDone:
			case <-ctx.Done():
				return Reviewed{}, ctx.Err()
			}
		case "broken":
			defer close(s.lastDone)
			select {
			case <-s.firstStarted:
			case <-ctx.Done():
				return Reviewed{}, ctx.Err()
			}
		}
	}

	id := "review-" + c.Name
	if s.fails[c.Name] {
		return Reviewed{ID: id}, errors.New("review " + id + " failed: every call refused")
	}
	rep := &render.Report{Usage: render.Usage{LLMCalls: 3, TokensIn: 100, TokensOut: 10}}
	if s.finds[c.Name] {
		for i, g := range c.Golden {
			rep.Findings = append(rep.Findings, render.Finding{Finding: review.Finding{
				ID: int64(i + 1), File: g.File, LineStart: g.StartLine, LineEnd: g.EndLine, RiskType: review.RiskType(g.RiskType),
				Severity: review.Severity("high"), Description: g.Text,
			}})
		}
	}
	return Reviewed{ID: id, Report: rep}, nil
}

type savedRuns struct {
	mu   sync.Mutex
	runs []store.EvalRun
}

func (s *savedRuns) SaveEvalRun(_ context.Context, r store.EvalRun) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs = append(s.runs, r)
	return nil
}

func testCases() []Case {
	golden := func(file string, line int) []Golden {
		return []Golden{{File: file, StartLine: line, EndLine: line, Text: "unchecked error", RiskType: "error_handling"}}
	}
	return []Case{
		{Name: "found", Repo: "/r/found", Base: "a", Head: "b", Golden: golden("a.go", 10)},
		{Name: "missed", Repo: "/r/missed", Base: "a", Head: "b", Golden: golden("b.go", 20)},
		{Name: "broken", Repo: "/r/broken", Base: "a", Head: "b", Golden: golden("c.go", 30)},
	}
}

func newScripted(cases []Case) *scriptedReviewer {
	s := &scriptedReviewer{cases: map[string]Case{}, finds: map[string]bool{"found": true}, fails: map[string]bool{"broken": true},
		firstStarted: make(chan struct{}), lastDone: make(chan struct{})}
	for _, c := range cases {
		s.cases[c.Repo] = c
	}
	return s
}

// Cases under review at once end in any order; the run keeps the
// dataset's order, scores each case, records the failed one as all
// misses with its review, and stores what it printed.
func TestEvaluatorRunScoresCasesInDatasetOrder(t *testing.T) {
	t.Parallel()
	cases := testCases()
	rv := newScripted(cases)
	rv.holdFirst = true
	runs := &savedRuns{}
	e := &Evaluator{Review: rv.review, Runs: runs, Dataset: "ds", Parallel: 3}
	h := config.Default().Harness
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := e.Run(ctx, cases, h, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if rv.maxAtOne < 2 {
		t.Errorf("at most %d case under review at once, want several with Parallel 3", rv.maxAtOne)
	}
	var names []string
	for _, c := range r.Cases {
		names = append(names, c.Name)
	}
	if len(names) != 3 || names[0] != "found" || names[1] != "missed" || names[2] != "broken" {
		t.Fatalf("cases %v, want the dataset's order", names)
	}
	found, missed, broken := r.Cases[0], r.Cases[1], r.Cases[2]
	if found.TP != 1 || found.FP != 0 || found.FN != 0 || found.ReviewID != "review-found" || found.LLMCalls != 3 {
		t.Errorf("found: %+v", found)
	}
	if missed.TP != 0 || missed.FN != 1 {
		t.Errorf("missed: %+v", missed)
	}
	if broken.Error == "" || broken.FN != 1 || broken.ReviewID != "review-broken" {
		t.Errorf("broken: %+v", broken)
	}
	if r.Totals.TP != 1 || r.Totals.FN != 2 || r.Label != "nightly" || r.Parallel != 3 {
		t.Errorf("run: %+v", r)
	}
	if len(runs.runs) != 1 {
		t.Fatalf("%d runs stored, want 1", len(runs.runs))
	}
	st := runs.runs[0]
	if st.ID != r.ID || st.TP != 1 || st.FN != 2 || len(st.Results) != 3 || st.Results[2].Error == "" || StoredParallel(st.Harness) != 3 {
		t.Errorf("stored run: %+v", st)
	}
}

// Ablation runs every toggle on, then each toggle off in a run of its
// own, and hands the reviewer each run's settings (never the others').
func TestEvaluatorAblationHandsEachRunItsHarness(t *testing.T) {
	t.Parallel()
	cases := testCases()[:1]
	rv := newScripted(cases)
	runs := &savedRuns{}
	e := &Evaluator{Review: rv.review, Runs: runs, Dataset: "ds", Label: "x"}
	base := config.Default().Harness
	base.VerifyEnabled, base.EvalEnabled = false, true
	toggles, err := ParseToggles(" verify, eval ,verify")
	if err != nil || len(toggles) != 2 {
		t.Fatalf("ParseToggles: %v %v", toggles, err)
	}
	out, err := e.Evaluate(context.Background(), cases, base, toggles, &Baseline{ID: "old", FP: 0, FN: 0, Runtime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(rv.harness) != 3 {
		t.Fatalf("%d reviews, want 3 (all on, verify off, eval off)", len(rv.harness))
	}
	if !rv.harness[0].VerifyEnabled || !rv.harness[0].EvalEnabled {
		t.Errorf("all-on run reviewed with %+v", rv.harness[0])
	}
	if rv.harness[1].VerifyEnabled || !rv.harness[1].EvalEnabled {
		t.Errorf("verify-off run reviewed with %+v", rv.harness[1])
	}
	if !rv.harness[2].VerifyEnabled || rv.harness[2].EvalEnabled {
		t.Errorf("eval-off run reviewed with %+v", rv.harness[2])
	}
	if out.Label != "x: all on" || len(out.Ablation) != 2 || out.Ablation[0].Run.Label != "x: verify off" || out.Ablation[1].Toggle != "eval" {
		t.Errorf("labels: %q %+v", out.Label, out.Ablation)
	}
	if out.Compare == nil || out.Compare.BaselineID != "old" {
		t.Errorf("comparison: %+v", out.Compare)
	}
	if len(runs.runs) != 3 {
		t.Errorf("%d runs stored, want 3", len(runs.runs))
	}
	if _, err := ParseToggles("verify,speed"); err == nil {
		t.Error("an unknown toggle was accepted")
	}
}
